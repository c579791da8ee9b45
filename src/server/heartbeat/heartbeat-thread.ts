/**
 * The heartbeat's worker-thread entry: wires the loop (heartbeat-loop.ts) to
 * the thread's port. Nothing else belongs here: code in this file runs only
 * inside the thread, where no test's coverage or mutant switch reaches.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { HeartbeatThreadData, ToThread } from './heartbeat-messages';
import { describeFailure, HeartbeatLoop } from './heartbeat-loop';

const port = parentPort!;
const loop = new HeartbeatLoop(workerData as HeartbeatThreadData, (message) => port.postMessage(message));
port.on('message', (message: ToThread) => loop.receive(message));

loop.run().catch((error) => {
  port.postMessage({ type: 'log', level: 'error', message: `heartbeat thread crashed: ${describeFailure(error)}` });
  process.exit(1);
});
