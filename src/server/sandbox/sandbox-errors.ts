import { WurkError } from '../../job/errors';

/**
 * A sandboxed perform that was still running `graceMs` after its job's
 * AbortSignal fired: its thread was terminated (the work stopped for real)
 * and the job fails with this error, or is handed back at shutdown.
 */
export class SandboxTerminatedError extends WurkError {
  constructor(
    readonly workerName: string,
    readonly graceMs: number,
    readonly reason: string,
  ) {
    super(`${workerName}: sandbox thread terminated ${graceMs} ms after the job was aborted (${reason})`);
  }
}

/**
 * The thread running a sandboxed perform died under it: `process.exit()`,
 * an uncaught error outside the perform's promise, or its resource limits.
 * Only that job fails; the pool starts a new thread for the next one.
 */
export class SandboxThreadDiedError extends WurkError {
  constructor(
    readonly workerName: string,
    readonly reason: string,
  ) {
    super(`${workerName}: sandbox thread died while performing the job (${reason})`);
  }
}
