import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../../sample/app.module';
import { API_MOUNT, setUpOpenApi } from '../../sample/http-api';
import { PROBLEM_TYPES } from '../../src/api/problem';
import { API_ROUTES } from '../../src/api/route-table';
import { call, post } from './api-app';
import { usePrivateRedis } from '../support/private-redis';

const TOKEN = 'sample-admin-token-0000000000';

describe('the sample app serves the HTTP API and its OpenAPI description', () => {
  const server = usePrivateRedis();
  let app: INestApplication;
  let port: number;
  const saved = { ...process.env };

  beforeAll(async () => {
    process.env.REDIS_URL = server.url;
    process.env.WURK_API_TOKEN = TOKEN;
    app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
    setUpOpenApi(app);
    await app.listen(0, '127.0.0.1');
    port = app.getHttpServer().address().port;
  });
  afterAll(async () => {
    await app?.close();
    process.env = saved;
  });

  it("documents wurk's routes through Swagger's own scan: every route, body, response and the bearer scheme", async () => {
    const res = await call(port, { path: '/openapi.json' });
    expect(res.status).toBe(200);
    const document = res.json;
    expect(document.components.securitySchemes['wurk-bearer']).toEqual(
      expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    );
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        `${API_MOUNT}/v1`,
        `${API_MOUNT}/v1/jobs`,
        `${API_MOUNT}/v1/jobs/bulk`,
        `${API_MOUNT}/v1/jobs/{jid}`,
        '/signup',
      ]),
    );
    const jobs = document.paths[`${API_MOUNT}/v1/jobs`].post;
    expect(jobs.requestBody.content['application/json'].schema.required).toEqual(['class', 'args']);
    expect(jobs.security).toEqual([{ 'wurk-bearer': [] }]);
    expect(jobs.tags).toEqual(['wurk']);
    expect(
      jobs.parameters.map((parameter: { name: string; in: string }) => `${parameter.in}:${parameter.name}`),
    ).toEqual(['header:Idempotency-Key']);
    expect(Object.keys(jobs.responses).sort()).toEqual(['200', '201', '400', '401', '403', '409', '413', '429', '500']);
    expect(jobs.responses['413'].content['application/problem+json'].schema).toEqual({
      $ref: '#/components/schemas/WurkProblem',
    });
    const problem = document.components.schemas.WurkProblem;
    expect(problem.properties.type.enum.sort()).toEqual(Object.keys(PROBLEM_TYPES).sort());
    expect(Object.keys(document.paths[`${API_MOUNT}/v1/jobs/{jid}`]).sort()).toEqual(['delete', 'get']);
    // Every row of the route table is an operation, with its scope; the fallback that answers 404/405 problems is none.
    const operations = Object.entries(document.paths as Record<string, Record<string, { description: string }>>)
      .filter(([path]) => path.startsWith(`${API_MOUNT}/`))
      .flatMap(([path, item]) =>
        Object.entries(item).map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation.description}`),
      );
    const expected = API_ROUTES.map(
      (route) => `${route.method} ${API_MOUNT}${route.pattern.replace(/:(\w+)/g, '{$1}')} Scope: ${route.scope}.`,
    );
    expect(operations.sort()).toEqual(expected.sort());
    expect(API_ROUTES.length).toBeGreaterThan(25);
  });

  it("enqueues with the token from the environment, and the app's own routes keep Nest's JSON parser", async () => {
    const created = await post(port, `${API_MOUNT}/v1/jobs`, TOKEN, {
      class: 'HardWorker',
      args: ['over http'],
      queue: 'ruby',
    });
    expect(created.status).toBe(201);
    expect(JSON.parse((await server.redis.lindex('queue:ruby', 0)) as string).jid).toBe(created.json.jid);
    const refused = await post(port, `${API_MOUNT}/v1/jobs`, TOKEN, { class: 'NotListed', args: [] });
    expect(refused.json.type).toBe('class_not_allowed');
    const signup = await post(port, '/signup', undefined, { email: 'ann@example.com', name: 'Ann' });
    expect(signup.status).toBe(201);
    expect(signup.json.ruby).toMatch(/^[0-9a-f]{24}$/);
  });
});
