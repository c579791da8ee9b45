/**
 * `nestjs-wurk/worker`: run only the processors of an app, from your own
 * entry file (the `wurk-worker` command is the same thing with flags), and
 * what sandboxed workers (`@Worker({ sandbox })`) fail with and are set with, and what a run past its `timeout` or
 * `deadline` fails with.
 */
export { runStandaloneWorker, parseQueues } from '../nest/standalone-worker';
export type { StandaloneWorkerOptions } from '../nest/standalone-worker';
export { SandboxTerminatedError, SandboxThreadDiedError } from '../server/sandbox/sandbox-errors';
export type { SandboxOptions, SandboxResourceLimits } from '../job/job-hash';
export { JobDeadlineError, JobTimeoutError } from '../job/job-limits';
