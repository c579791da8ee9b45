/** `npm run bench`: every benchmark in turn, then wurk's figures beside its peers' and the floor's in one table. */
import { runBatchBench } from './batches';
import { runEnqueueBench } from './enqueue';
import { runMemoryBench } from './memory';
import { runSelectedProcessingBench } from './processing';
import { printFloorTable } from './summary';

async function main(): Promise<void> {
  const enqueue = await runEnqueueBench();
  const { throughput, latency } = await runSelectedProcessingBench();
  const idle = await runMemoryBench();
  await runBatchBench();
  printFloorTable({ throughput, latency, idle, enqueue });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
