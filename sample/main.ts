import 'reflect-metadata';
import { Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { API_MOUNT, setUpOpenApi } from './http-api';
import { ObservabilityModule } from './observability.module';
import { startPrivateRedis } from './private-redis';

/** The served app: the jobs of AppModule, plus health and metrics. */
@Module({ imports: [AppModule, ObservabilityModule] })
class SampleServerModule {}

/**
 * `npm run sample`: serves the sample on PORT (default 3000). With no
 * REDIS_URL it starts a private redis-server, so nothing else is needed.
 */
async function main(): Promise<void> {
  const logger = new Logger('Sample');
  let stopRedis = (): void => undefined;
  if (!process.env.REDIS_URL) {
    const redis = await startPrivateRedis();
    process.env.REDIS_URL = redis.url;
    stopRedis = redis.stop;
    logger.log(`started a private redis-server at ${process.env.REDIS_URL}`);
  }
  const app = await NestFactory.create(SampleServerModule);
  setUpOpenApi(app);
  // Our own signal handling rather than enableShutdownHooks: the drain-first
  // close must finish before the private redis-server goes away with us.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      logger.log(`${signal}: draining running jobs, then stopping`);
      void app.close().finally(() => {
        stopRedis();
        process.exit(0);
      });
    });
  }
  const port = Number(process.env.PORT ?? 3000);
  await app.listen(port, '127.0.0.1');
  logger.log(`listening on http://127.0.0.1:${port}`);
  logger.log(
    `try: curl -s -X POST localhost:${port}/signup -H 'content-type: application/json' -d '{"email":"ann@example.com","name":"Ann"}'`,
  );
  logger.log(
    `a failing job (one warning per attempt): curl -s -X POST localhost:${port}/invoices -H 'content-type: application/json' -d '{"account":7,"cents":-5}'`,
  );
  logger.log(
    `health: curl -s localhost:${port}/health (also /health/live, /health/ready); metrics: curl -s localhost:${port}/metrics`,
  );
  logger.log(
    `job status: curl -s -X POST localhost:${port}/reports -H 'content-type: application/json' -d '{"rows":20}'  (then GET /reports/<jid>)`,
  );
  logger.log(
    process.env.WURK_API_TOKEN
      ? `HTTP API at http://127.0.0.1:${port}${API_MOUNT}/v1 (OpenAPI: /openapi.json); dashboard at http://127.0.0.1:${port}/dashboard/ (sign in with WURK_API_TOKEN)`
      : 'HTTP API routes answer 404 until WURK_API_TOKEN (20+ characters) is set',
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
