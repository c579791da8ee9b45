/**
 * `nestjs-wurk/worker`: run only the processors of an app, from your own
 * entry file (the `wurk-worker` command is the same thing with flags).
 */
export { runStandaloneWorker, parseQueues } from '../nest/standalone-worker';
export type { StandaloneWorkerOptions } from '../nest/standalone-worker';
