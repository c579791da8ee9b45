/**
 * The @nestjs/bullmq side of the processing benchmark: the peer a Nest team
 * would otherwise run. A Nest application context with BullModule and one
 * `@Processor` (a WorkerHost) at concurrency 10, running BENCH_SHAPE, timed
 * from inside the process (see recorder.ts for the protocol: BENCH_MODE,
 * BENCH_JOBS, READY / PROGRESS / RESULT lines).
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BullModule, Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { BenchRecorder, runShape } from './recorder';

const recorder = new BenchRecorder();
const url = new URL(process.env.REDIS_URL!);

@Processor('bench', { concurrency: 10 })
class NoopProcessor extends WorkerHost {
  async process(job: Job): Promise<void> {
    recorder.started(job.data.t as number | undefined);
    await runShape(recorder.shape);
    recorder.finished();
  }
}

@Module({
  imports: [
    BullModule.forRoot({
      connection: { host: url.hostname, port: Number(url.port), maxRetriesPerRequest: null },
    }),
    BullModule.registerQueue({ name: 'bench' }),
  ],
  providers: [NoopProcessor],
})
class BenchModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(BenchModule, { logger: ['error', 'warn'] });
  await app.get(NoopProcessor).worker.waitUntilReady();
  recorder.ready();
  process.on('SIGTERM', () => {
    void app.close().finally(() => process.exit(0));
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
