/**
 * The floor of the processing benchmark: a bare ioredis process, no framework
 * and no job system, that keeps each job as safe as reliable fetch does and
 * adds nothing else. One call of bench/floor.lua acknowledges the previous
 * batch (LREM by value from a private list) and claims the next ten (LMOVE),
 * then it runs them together; BLMOVE (1 s) when the queue is empty. A crash
 * leaves every claimed job in the private list.
 *
 * Nothing a job system must also do is here: no retries, no heartbeat, no
 * orphan recovery, no pause, no middleware, no status. Same protocol as the
 * other workers (recorder.ts: BENCH_MODE, BENCH_JOBS, READY / PROGRESS /
 * RESULT lines).
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { BenchRecorder, runShape } from './recorder';

const BATCH = 10;
const QUEUE = 'queue:default';
const PRIVATE = `bench:floor:${hostname()}:${process.pid}`;

async function main(): Promise<void> {
  const recorder = new BenchRecorder();
  const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  // Compiled into the bench's build directory, run from the checkout: the script sits beside this worker's source.
  const lua = readFileSync(join(process.cwd(), 'bench', 'floor.lua'), 'utf8');
  const sha = (await redis.script('LOAD', lua)) as string;
  let stopping = false;
  process.on('SIGTERM', () => {
    stopping = true;
    redis.disconnect();
    process.exit(0);
  });

  const run = async (payload: string): Promise<void> => {
    const job = JSON.parse(payload) as { args: unknown[] };
    recorder.started(job.args[0] as number | undefined);
    await runShape(recorder.shape);
    recorder.finished();
  };

  recorder.ready();
  let acks: string[] = [];
  while (!stopping) {
    let claimed = (await redis.evalsha(sha, 2, QUEUE, PRIVATE, BATCH, ...acks)) as string[];
    acks = [];
    if (claimed.length === 0) {
      const job = await redis.blmove(QUEUE, PRIVATE, 'RIGHT', 'LEFT', 1);
      if (job === null) continue;
      claimed = [job];
    }
    await Promise.all(claimed.map(run));
    acks = claimed;
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
