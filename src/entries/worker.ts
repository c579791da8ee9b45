/**
 * `nestjs-wurk/worker`: run only the processors of an app, from your own
 * entry file (the `wurk-worker` command is the same thing with flags), and
 * what sandboxed workers (`@Worker({ sandbox })`) fail with and are set with.
 */
export { runStandaloneWorker, parseQueues } from '../nest/standalone-worker';
export type { StandaloneWorkerOptions } from '../nest/standalone-worker';
export { SandboxTerminatedError, SandboxThreadDiedError } from '../server/sandbox/sandbox-errors';
export type { SandboxOptions, SandboxResourceLimits } from '../job/job-hash';
