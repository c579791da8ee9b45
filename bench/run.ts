/** `npm run bench`: every benchmark in turn. */
import { runEnqueueBench } from './enqueue';
import { runSelectedProcessingBench } from './processing';

async function main(): Promise<void> {
  await runEnqueueBench();
  await runSelectedProcessingBench();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
