/** `npm run bench`: every benchmark in turn. */
import { runBatchBench } from './batches';
import { runEnqueueBench } from './enqueue';
import { runMemoryBench } from './memory';
import { runSelectedProcessingBench } from './processing';

async function main(): Promise<void> {
  await runEnqueueBench();
  await runSelectedProcessingBench();
  await runMemoryBench();
  await runBatchBench();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
