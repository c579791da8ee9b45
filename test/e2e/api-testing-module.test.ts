import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { IncomingMessage } from 'node:http';
import { WurkApiModule, WurkModule } from '../../src';
import { usePrivateRedis } from '../support/private-redis';
import {
  ADMIN_TOKEN,
  call,
  ENQUEUE_TOKEN,
  Platform,
  platformAdapter,
  PLATFORMS,
  post,
  PRODUCER_ONLY,
  TOKENS,
} from './api-app';

/** A body whose bytes a parse-and-reserialise would change: a Ruby float and a big integer. */
const EXACT = '{"class":"RecordJob","args":[1.0,12345678901234567890],"queue":"low"}';

async function listening(app: INestApplication): Promise<number> {
  await app.listen(0, '127.0.0.1');
  return (app.getHttpServer().address() as { port: number }).port;
}

describe.each(PLATFORMS)(
  'HTTP API in an app from Test.createTestingModule, without rawBody (%s)',
  (platform: Platform) => {
    const server = usePrivateRedis({ flushBeforeEach: true });
    let app: INestApplication;
    let port: number;

    beforeAll(async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          WurkModule.forRoot({
            redis: { url: server.url },
            api: { tokens: TOKENS, enqueueClasses: 'any', maxBodyBytes: 256 },
            ...PRODUCER_ONLY,
          }),
          WurkApiModule.register(),
        ],
      }).compile();
      const adapter = platformAdapter(platform);
      app = adapter
        ? moduleRef.createNestApplication(adapter, { logger: false })
        : moduleRef.createNestApplication({ logger: false });
      port = await listening(app);
    });
    afterAll(() => app?.close());

    it('pushes a JSON body with its bytes as sent', async () => {
      const created = await post(port, '/api/v1/jobs', ENQUEUE_TOKEN, EXACT);
      expect(created.status).toBe(201);
      expect(await server.redis.lindex('queue:low', 0)).toContain('"args":[1.0,12345678901234567890]');
    });

    it('keeps the cap, and the order of checks: 401 before 413', async () => {
      const big = JSON.stringify({ class: 'RecordJob', args: ['x'.repeat(300)] });
      expect((await post(port, '/api/v1/jobs', undefined, big)).status).toBe(401);
      const refused = await post(port, '/api/v1/jobs', ENQUEUE_TOKEN, big);
      expect(refused.status).toBe(413);
      expect(refused.headers['content-type']).toBe('application/problem+json');
    });

    it('answers a malformed body and a body of any content type as the contract does', async () => {
      const malformed = await post(port, '/api/v1/jobs', ENQUEUE_TOKEN, '{"class":');
      expect(malformed.status).toBe(400);
      expect(malformed.headers['content-type']).toBe('application/problem+json');
      const text = await call(port, {
        method: 'POST',
        path: '/api/v1/jobs',
        token: ENQUEUE_TOKEN,
        body: EXACT,
        headers: { 'content-type': 'text/plain' },
      });
      expect(text.status).toBe(201);
    });
  },
);

/**
 * What express.json() does, put on the Express instance before Nest gets it: reads the stream to its end and keeps only
 * the parse.
 */
function parseJsonFirst(req: IncomingMessage & { body?: unknown }, _res: unknown, next: () => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    req.body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {};
    next();
  });
}

describe('HTTP API behind a JSON parser the app put on its Express instance first', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let app: INestApplication;
  let port: number;

  beforeAll(async () => {
    const adapter = new ExpressAdapter();
    adapter.use(parseJsonFirst);
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          api: { tokens: TOKENS, enqueueClasses: 'any' },
          ...PRODUCER_ONLY,
        }),
        WurkApiModule.register(),
      ],
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, adapter, { logger: false, abortOnError: false });
    port = await listening(app);
  });
  afterAll(() => app?.close());

  it('answers at once (the reader does not wait for a stream already read) with a 500 problem naming no internals', async () => {
    const started = Date.now();
    const answer = await post(port, '/api/v1/jobs', ADMIN_TOKEN, EXACT);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(answer.status).toBe(500);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(await server.redis.llen('queue:low')).toBe(0);
    // A bodyless route is unaffected.
    expect((await call(port, { path: '/api/v1/stats', token: ADMIN_TOKEN })).status).toBe(200);
  });
});
