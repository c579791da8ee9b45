import {
  CallHandler,
  CanActivate,
  Catch,
  Controller,
  ExceptionFilter,
  ArgumentsHost,
  ExecutionContext,
  Get,
  Injectable,
  Module,
  NestInterceptor,
  HttpException,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, NestFactory, RouterModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { INestApplication } from '@nestjs/common';
import { map } from 'rxjs';
import { isWurkApiRoute, WurkApiModule, WurkModule } from '../../src';
import { ADMIN_TOKEN, call, post, PRODUCER_ONLY, READ_TOKEN, TOKENS } from './api-app';
import { usePrivateRedis } from '../support/private-redis';

/** Blocks any request carrying `x-block`, and records which requests it saw as wurk routes. */
@Injectable()
class HostGuard implements CanActivate {
  static seen: string[] = [];
  canActivate(context: ExecutionContext): boolean {
    const req = context
      .switchToHttp()
      .getRequest<{ method: string; originalUrl: string; headers: Record<string, string> }>();
    HostGuard.seen.push(`${req.method} ${req.originalUrl} wurk=${isWurkApiRoute(context)}`);
    if (req.headers['x-block'] !== undefined) throw new HttpException({ blocked: true }, 418);
    return true;
  }
}

/** The response envelope some apps wrap every answer in (the pitfall of NP#2361). */
@Injectable()
class EnvelopeInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler) {
    return next.handle().pipe(map((data) => ({ data })));
  }
}

/** A host's catch-all filter: it must keep answering the host's own routes. */
@Catch()
class HostFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<{ status(code: number): { json(body: unknown): void } }>();
    res.status(exception instanceof HttpException ? exception.getStatus() : 500).json({ host: 'filter' });
  }
}

@Controller('host')
class HostController {
  @Get('hello')
  hello(): { hello: string } {
    return { hello: 'host' };
  }

  @Get('fail')
  fail(): never {
    throw new HttpException('nope', 409);
  }
}

function listen(app: INestApplication): Promise<number> {
  return app.listen(0, '127.0.0.1').then(() => app.getHttpServer().address().port);
}

describe('HTTP API as Nest controllers: global prefix, RouterModule, app guards, interceptors and filters', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let app: INestApplication;
  let port: number;

  beforeAll(async () => {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          ...PRODUCER_ONLY,
          api: { tokens: TOKENS, enqueueClasses: 'any' },
        }),
        WurkApiModule.register({ path: 'jobs-api' }),
        RouterModule.register([{ path: 'ops', module: WurkApiModule }]),
      ],
      controllers: [HostController],
      providers: [
        { provide: APP_GUARD, useClass: HostGuard },
        { provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor },
        { provide: APP_FILTER, useClass: HostFilter },
      ],
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
    app.setGlobalPrefix('svc');
    port = await listen(app);
  });
  afterAll(async () => {
    await app?.close();
  });

  it('serves the routes under global prefix + RouterModule path + module path, and says so in discovery', async () => {
    const discovery = await call(port, { path: '/svc/ops/jobs-api/v1', token: READ_TOKEN });
    expect(discovery.status).toBe(200);
    // Exact bytes: the host's envelope interceptor does not wrap wurk's answers.
    expect(discovery.text).toBe(
      JSON.stringify({
        api_version: 'v1',
        wurk_version: require('../../package.json').version,
        url: '/svc/ops/jobs-api/v1',
        read_only: false,
        rate_limit: null,
        scopes: ['read'],
      }),
    );
    const created = await post(port, '/svc/ops/jobs-api/v1/jobs', ADMIN_TOKEN, '{"class":"RecordJob","args":[1.0]}');
    expect(created.status).toBe(201);
    expect(Object.keys(created.json)).toEqual(['jid']);
    expect(await server.redis.lindex('queue:default', 0)).toContain('"args":[1.0]');
    expect((await call(port, { path: '/jobs-api/v1', token: READ_TOKEN })).status).toBe(404);
  });

  it('keeps problem documents and the order of checks under the prefix', async () => {
    const missing = await call(port, { path: '/svc/ops/jobs-api/v2' });
    expect(missing.status).toBe(401);
    expect(missing.json.instance).toBe('/svc/ops/jobs-api/v2');
    const version = await call(port, { path: '/svc/ops/jobs-api/v2', token: READ_TOKEN });
    expect(version.json.type).toBe('unsupported_api_version');
    const verb = await call(port, { method: 'PUT', path: '/svc/ops/jobs-api/v1/jobs', token: READ_TOKEN });
    expect(verb.status).toBe(405);
    expect(verb.headers.allow).toBe('POST');
    const decode = await call(port, { path: '/svc/ops/jobs-api/v1/jobs/%zz', token: READ_TOKEN });
    expect(decode.status).toBe(404);
    expect(decode.headers['content-type']).toBe('application/problem+json');
    // A body Nest's parser would refuse: the early reader took it, so the gate answers first.
    const garbage = await post(port, '/svc/ops/jobs-api/v1/jobs', undefined, '{"class":');
    expect(garbage.status).toBe(401);
    const invalid = await post(port, '/svc/ops/jobs-api/v1/jobs', ADMIN_TOKEN, '{"class":');
    expect(invalid.status).toBe(400);
    expect(invalid.json).toMatchObject({ type: 'invalid_request', detail: 'The request body is not valid JSON.' });
  });

  it("runs the app's global guard on wurk's routes, which can tell them apart and answer for itself", async () => {
    HostGuard.seen = [];
    await call(port, { path: '/svc/ops/jobs-api/v1', token: READ_TOKEN });
    await call(port, { path: '/svc/host/hello' });
    expect(HostGuard.seen).toEqual(['GET /svc/ops/jobs-api/v1 wurk=true', 'GET /svc/host/hello wurk=false']);
    const blocked = await call(port, { path: '/svc/ops/jobs-api/v1', token: READ_TOKEN, headers: { 'x-block': '1' } });
    expect(blocked.status).toBe(418);
    expect(blocked.json).toEqual({ host: 'filter' });
  });

  it("leaves the app's own routes to its interceptors and filters", async () => {
    expect((await call(port, { path: '/svc/host/hello' })).json).toEqual({ data: { hello: 'host' } });
    const failed = await call(port, { path: '/svc/host/fail' });
    expect(failed.status).toBe(409);
    expect(failed.json).toEqual({ host: 'filter' });
    const unknown = await call(port, { path: '/svc/nowhere' });
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ host: 'filter' });
    expect((await post(port, '/svc/host/hello', undefined, '{"broken":')).json).toEqual({ host: 'filter' });
  });
});

describe('HTTP API in an app from Test.createTestingModule (wurk reads its bodies ahead of Nest parsers there too)', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const apps: INestApplication[] = [];

  async function testingApp(rawBody: boolean): Promise<number> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          ...PRODUCER_ONLY,
          api: { tokens: TOKENS, enqueueClasses: 'any' },
        }),
        WurkApiModule.register(),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false, rawBody });
    apps.push(app);
    return listen(app);
  }

  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  it('with rawBody: true as without: the bytes kept, refusals answered as problems after the gate, the API cap in force', async () => {
    const port = await testingApp(true);
    expect((await post(port, '/api/v1/jobs', ADMIN_TOKEN, '{"class":"RecordJob","args":[1.0,2]}')).status).toBe(201);
    expect(await server.redis.lindex('queue:default', 0)).toContain('"args":[1.0,2]');
    expect((await post(port, '/api/v1/jobs', undefined, '{"class":')).status).toBe(401);
    const invalid = await post(port, '/api/v1/jobs', ADMIN_TOKEN, '{"class":');
    expect(invalid.status).toBe(400);
    expect(invalid.headers['content-type']).toBe('application/problem+json');
    expect(invalid.json).toMatchObject({
      type: 'invalid_request',
      detail: 'The request body is not valid JSON.',
      instance: '/api/v1/jobs',
    });
    // wurk read the body before Nest's parser (100 kB limit) could: the API's own limits applied (here its 64 KiB args
    // cap).
    const big = await post(port, '/api/v1/jobs', ADMIN_TOKEN, { class: 'RecordJob', args: ['x'.repeat(200_000)] });
    expect(big.status).toBe(413);
    expect(big.json).toMatchObject({ type: 'payload_too_large', max_bytes: 65_536 });
  });

  it('without rawBody the job is pushed with its bytes as sent, never re-encoded (a 1.0 stays 1.0)', async () => {
    const port = await testingApp(false);
    const res = await post(port, '/api/v1/jobs', ADMIN_TOKEN, '{"class":"RecordJob","args":[1.0]}');
    expect(res.status).toBe(201);
    expect(await server.redis.lindex('queue:default', 0)).toContain('"args":[1.0]');
  });
});

describe('@nestjs/swagger, an optional peer', () => {
  it('is loaded only when an app registers WurkApiModule (a worker process never pays its load time)', () => {
    let loads = 0;
    jest.isolateModules(() => {
      jest.doMock('@nestjs/swagger', () => {
        loads += 1;
        return jest.requireActual('@nestjs/swagger');
      });
      const wurk = require('../../src') as typeof import('../../src');
      expect(loads).toBe(0);
      wurk.WurkApiModule.register();
      expect(loads).toBe(1);
    });
  });

  it('may be missing: the package loads and WurkApiModule still builds its controllers', () => {
    jest.isolateModules(() => {
      jest.doMock('@nestjs/swagger', () => {
        const error = new Error("Cannot find module '@nestjs/swagger'") as NodeJS.ErrnoException;
        error.code = 'MODULE_NOT_FOUND';
        throw error;
      });
      const wurk = require('../../src') as typeof import('../../src');
      expect(() => require('@nestjs/swagger')).toThrow(/Cannot find module/);
      expect(wurk.WurkApiModule.register({ path: 'api' }).controllers).toHaveLength(3);
    });
  });
});
