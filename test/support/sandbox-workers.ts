/**
 * Sandboxed worker classes for the sandbox tests. A sandbox thread imports
 * this file, so it has no side effects beyond declaring classes (a test file
 * with describe() calls could not be imported by a thread).
 */
import 'reflect-metadata';
import { threadId } from 'node:worker_threads';
import { Injectable } from '@nestjs/common';
import { Worker } from '../../src/nest/worker.decorator';

/** A failure with its own class, to check `error_class` crosses the thread. */
export class ReportFailedError extends Error {}

function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // Spinning on purpose: a CPU-bound perform that never yields to its event loop.
  }
}

@Worker({ sandbox: { pool: 2 }, retry: 3 })
export class ThreadReportJob {
  perform(kind: string, ms = 0): unknown {
    if (kind === 'fail') throw new ReportFailedError('the report could not be built');
    if (kind === 'busy') busy(ms);
    if (kind === 'exit') process.exit(3);
    if (kind === 'uncaught') {
      setTimeout(() => {
        throw new Error('thrown outside the perform promise');
      });
      return new Promise(() => undefined);
    }
    return { threadId, kind };
  }
}

/** A dependency the thread could not inject. */
@Injectable()
export class ReportStore {}

@Worker({ sandbox: true })
export class InjectedSandboxJob {
  constructor(readonly store: ReportStore) {}
  perform(): void {}
}
