import type { WorkerRegistry } from '../job/worker-registry';
import { UnknownWorkerError } from './processor';
import { errorClassOf, errorMessageOf } from './retry/error-fields';
import type { JobLifecycleListener, JobOutcome, ServerContext } from './server-middleware';
import type { ServerLogger } from './server-logger';

import type { JobLogMode } from '../config/server-group';

export { JOB_LOG_MODES } from '../config/server-group';
export type { JobLogMode } from '../config/server-group';

/**
 * The per-job log, a lifecycle listener so it hears the fate the settle step
 * decided and wrote (never a guess made before the write). Lines are
 * Sidekiq's `class=… jid=…` pairs; `all` adds Sidekiq's `start` and
 * `elapsed=… done` lines. A failure is one warning saying where the job
 * went; its stack goes to debug, so a crash loop does not bury the log in
 * stacks.
 */
export class JobLog implements JobLifecycleListener {
  /**
   * Only `all` has a start line to write; in the other modes the processor
   * has no start to tell this listener (the elapsed time comes from the
   * context), so no call per job.
   */
  readonly onStart: ((context: ServerContext) => void) | undefined;

  constructor(
    private readonly mode: Exclude<JobLogMode, 'none'>,
    private readonly logger: ServerLogger,
    private readonly registry: WorkerRegistry,
  ) {
    this.onStart = mode === 'all' ? (context) => this.logger.log(`${identify(context)} start`) : undefined;
  }

  onSettled(context: ServerContext, outcome: JobOutcome): void {
    // Only `all` logs a job that did not fail: the others return before any text is made (a no-op job's whole cost).
    if (outcome.kind === 'complete') {
      if (this.mode === 'all') this.logger.log(`${identify(context)}${this.elapsed(context)} done`);
      return;
    }
    if (outcome.kind === 'rescheduled') {
      // Over its limiter: back in schedule by design, not a failure.
      if (this.mode === 'all')
        this.logger.log(
          `${identify(context)}${this.elapsed(context)} over its limit, rescheduled ${atAndIn(outcome.retryAt)}`,
        );
      return;
    }
    // Not run: the processor logs the drop itself, whatever this log's mode, so it is said exactly once.
    if (outcome.kind === 'expired') return;
    const elapsed = this.elapsed(context);
    if (!('error' in outcome)) {
      // Handed back at shutdown: not a failure, it runs again elsewhere (a perform that threw undefined has the key).
      if (this.mode === 'all')
        this.logger.log(`${identify(context)}${elapsed} ${outcome.reason ?? 'handed back at shutdown'}`);
      return;
    }
    const { error } = outcome;
    const line = `${identify(context)} queue=${context.queue} attempt=${context.attempt}${elapsed} fail: ${errorClassOf(error)}: ${oneLine(errorMessageOf(error))}; ${whereItWent(outcome)}`;
    if (error instanceof UnknownWorkerError) this.logger.error(`${line}. ${this.unknownWorkerHint(error.className)}`);
    else this.logger.warn(line);
    if (error instanceof Error && error.stack) this.logger.debug?.(`${identify(context)} stack: ${error.stack}`);
  }

  /**
   * The usual cause is a worker class that exists but is in no module's providers (or a producer's class name this app
   * never declared).
   */
  private unknownWorkerHint(className: string): string {
    const names = this.registry.appWorkers().map((worker) => worker.name);
    const known = names.length > 0 ? `The workers of this process: ${names.join(', ')}` : 'This process has no workers';
    return `${known}. Likely fix: add the ${className} class to a module's providers (or name the worker that should run it @Worker({ name: ${JSON.stringify(className)} }))`;
  }

  private elapsed(context: ServerContext): string {
    const started = context.startedAt;
    return started === undefined ? '' : ` elapsed=${((performance.now() - started) / 1000).toFixed(3)}`;
  }
}

function identify(context: ServerContext): string {
  return `class=${context.job.className} jid=${context.job.jid}`;
}

function whereItWent(outcome: Exclude<JobOutcome, { kind: 'complete' | 'rescheduled' | 'expired' }>): string {
  switch (outcome.kind) {
    case 'retrying':
      return `retry #${outcome.retryCount + 1} ${atAndIn(outcome.retryAt)}`;
    case 'dead':
      return `moved to dead${outcome.reason ? ` (${outcome.reason})` : ''}`;
    case 'failed':
      return 'dropped (retry: false, dead: false or a discard from its hooks): no retry, no dead entry';
    case 'interrupted':
      return 'interrupted: its filing failed and is retried (see the error above)';
  }
}

/** `at <ISO> (in N s)` for an epoch in ms. */
function atAndIn(epochMs: number): string {
  const inSeconds = Math.max(0, Math.round((epochMs - Date.now()) / 1000));
  return `at ${new Date(epochMs).toISOString()} (in ${inSeconds} s)`;
}

/** A message over several lines would break the one-line-per-failure promise; the stack keeps the original. */
function oneLine(text: string): string {
  const flat = text.replace(/\s*\n\s*/g, ' ⏎ ');
  return flat.length > 500 ? `${flat.slice(0, 500)}…` : flat;
}
