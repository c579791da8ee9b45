/** `npm run bench`: every benchmark in turn. */
import { runEnqueueBench } from './enqueue';

async function main(): Promise<void> {
  await runEnqueueBench();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
