/**
 * The BullMQ 5 side of the processing benchmark: a Worker with concurrency 10
 * running BENCH_SHAPE, timed from inside the process (see recorder.ts for the
 * protocol: BENCH_MODE, BENCH_JOBS, READY / PROGRESS / RESULT lines).
 */
import { Worker } from 'bullmq';
import { BenchRecorder, runShape } from './recorder';

async function main(): Promise<void> {
  const recorder = new BenchRecorder();
  const url = new URL(process.env.REDIS_URL!);
  const worker = new Worker(
    'bench',
    async (job) => {
      recorder.started(job.data.t as number | undefined);
      await runShape(recorder.shape);
      recorder.finished();
    },
    { connection: { host: url.hostname, port: Number(url.port), maxRetriesPerRequest: null }, concurrency: 10 },
  );
  await worker.waitUntilReady();
  recorder.ready();
  process.on('SIGTERM', () => {
    void worker.close().finally(() => process.exit(0));
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
