/**
 * The wurk side of the processing benchmark: a minimal Nest application
 * context with WurkModule and one worker running BENCH_SHAPE, concurrency 10, the fetch
 * from BENCH_FETCH (see recorder.ts for the BENCH_MODE / BENCH_JOBS
 * protocol and the READY / PROGRESS / RESULT lines).
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Worker, WurkModule } from '../../src';
import { BenchRecorder, runShape } from './recorder';

const recorder = new BenchRecorder();

@Worker()
class NoopJob {
  async perform(pushedAt?: number): Promise<void> {
    recorder.started(pushedAt);
    await runShape(recorder.shape);
    recorder.finished();
  }
}

@Module({
  imports: [
    WurkModule.forRoot({
      redis: { url: process.env.REDIS_URL },
      concurrency: 10,
      queues: ['default'],
      fetch: process.env.BENCH_FETCH === 'basic' ? 'basic' : 'reliable',
    }),
  ],
  providers: [NoopJob],
})
class BenchModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(BenchModule, { logger: ['error', 'warn'] });
  recorder.ready();
  process.on('SIGTERM', () => {
    void app.close().finally(() => process.exit(0));
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
