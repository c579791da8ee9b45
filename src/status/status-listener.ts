import type { JobPayload } from '../job/payload';
import { floatText, nowMs, toEpochSeconds } from '../job/time';
import type { JobExecution } from '../server/job-execution';
import { errorClassOf, errorMessageOf } from '../server/retry/error-fields';
import type { JobLifecycleListener, JobOutcome, ServerContext } from '../server/server-middleware';
import { IGNORES_UNMARKED_JOBS, IgnoresUnmarkedJobs } from '../server/unmarked-job-listener';
import type { StatusOptions } from './status-options';
import { StatusProgress } from './status-progress';
import type { StatusFields, StatusWriter } from './status-writer';
import { isTracked } from './tracked';
import { capUtf8 } from '../job/utf8-cap';

/** docs/internals/spec/contract.md §2.5 caps, in bytes of UTF-8. */
export const RESULT_CAP_BYTES = 8192;
export const ERROR_MESSAGE_CAP_BYTES = 1024;

/** Where status failures go: they are reported and swallowed, never the job's fate. */
export type StatusErrorReporter = (error: unknown, jid: string, what: string) => void;

/** What the listener reads from a context; `execution` is where the progress reporter is installed. */
type StatusContext = ServerContext & { execution?: JobExecution };

/**
 * Keeps the status rows of tracked jobs as the processor runs and settles
 * them (docs/internals/spec/contract.md §2.5): `running` at start, then the settled state with its
 * result or error, the newest buffered progress folded in. Untracked jobs
 * return at the first line, so they cost no command.
 */
export class StatusListener implements JobLifecycleListener, IgnoresUnmarkedJobs {
  readonly [IGNORES_UNMARKED_JOBS] = true as const;

  /**
   * Keyed by jid, not by context: a job handed back at shutdown is settled
   * through a fresh context built from its payload, and its buffered
   * progress must still reach the interrupted row.
   */
  private readonly progress = new Map<string, StatusProgress>();

  constructor(
    private readonly writer: Pick<StatusWriter, 'write' | 'remove'>,
    private readonly options: StatusOptions,
    private readonly reportError: StatusErrorReporter,
  ) {}

  // Untracked jobs are answered synchronously: the processor awaits only a promise.
  /**
   * For a tracked job: writes `running` with `class`, `queue`, `enqueued_at`,
   * `started_at` and `attempt` onto `status:<jid>` (creating the row, with the
   * status TTL) and installs the progress reporter `JobContext.progress` uses.
   * Untracked jobs cost nothing. A failed write is reported, never thrown.
   */
  onStart(context: StatusContext): Promise<void> | undefined {
    if (!isTracked(context.job) || context.job.jid === '') return undefined;
    return this.startTracked(context);
  }

  /**
   * For a tracked job: writes the settled state (`complete` with its `result`
   * capped at 8 KB, `retrying`, `dead`, `failed` with the error, `interrupted`,
   * or `scheduled` for a limiter's reschedule), the last buffered progress
   * folded in. A complete row takes `retention` as its TTL (0 deletes it).
   * A failed write is reported, never thrown.
   */
  onSettled(context: StatusContext, outcome: JobOutcome): Promise<void> | undefined {
    if (!isTracked(context.job) || context.job.jid === '') return undefined;
    return this.settleTracked(context, outcome);
  }

  private async startTracked(context: StatusContext): Promise<void> {
    const { job } = context;
    const jid = job.jid;
    const progress = new StatusProgress(
      this.options.progressInterval * 1000,
      (fields) => this.writer.write(jid, fields, { ttl: this.options.ttl, create: false }),
      (error) => this.reportError(error, jid, 'progress'),
    );
    // An earlier execution of this jid that was never settled must not keep writing over this attempt.
    void this.progress.get(jid)?.drain();
    this.progress.set(jid, progress);
    if (context.execution) context.execution.reporter = progress;
    await this.guard(jid, 'running', () =>
      this.writer.write(
        jid,
        {
          state: 'running',
          class: job.className || undefined,
          queue: job.queue || context.queue,
          enqueued_at: epochText(job.get('enqueued_at') ?? job.get('created_at')),
          started_at: floatText(nowMs() / 1000),
          attempt: context.attempt,
        },
        { ttl: this.options.ttl, create: true },
      ),
    );
  }

  private async settleTracked(context: StatusContext, outcome: JobOutcome): Promise<void> {
    const { job } = context;
    const jid = job.jid;
    const progress = this.progress.get(jid);
    this.progress.delete(jid);
    const buffered = progress ? await progress.drain() : undefined;
    await this.guard(jid, outcome.kind, async () => {
      if (outcome.kind === 'complete' && this.options.retention === 0) {
        await this.writer.remove(jid);
        return;
      }
      if (outcome.kind === 'rescheduled') {
        // Over its limiter: waiting in `schedule` until `scheduled_at`, not failed; the next attempt writes `running`.
        const fields: StatusFields = {
          ...buffered,
          state: 'scheduled',
          attempt: context.attempt,
          scheduled_at: floatText(outcome.retryAt / 1000),
        };
        await this.writer.write(jid, fields, { ttl: this.options.ttl, create: true });
        return;
      }
      if (outcome.kind === 'expired') {
        // Wurk's status sits outside its expiry step and sees the drop return cleanly: the row ends complete.
        const fields: StatusFields = { ...buffered, state: 'complete', attempt: context.attempt };
        fields.finished_at = floatText(nowMs() / 1000);
        await this.writer.write(jid, fields, { ttl: this.options.ttl, create: true });
        return;
      }
      const fields: StatusFields = { ...buffered, state: outcome.kind, attempt: context.attempt };
      // `retrying` ends the attempt, not the job: a finished_at here would sit on the next attempt's running row.
      if (outcome.kind !== 'retrying') fields.finished_at = floatText(nowMs() / 1000);
      if (outcome.kind === 'complete') Object.assign(fields, this.resultFields(job, outcome.result));
      else if (outcome.kind !== 'interrupted')
        Object.assign(fields, errorFields(outcome.error, 'reason' in outcome ? outcome.reason : undefined));
      const ttl =
        outcome.kind === 'complete' && this.options.retention !== undefined ? this.options.retention : this.options.ttl;
      await this.writer.write(jid, fields, { ttl, create: true });
    });
  }

  /** `result` as JSON capped at 8 KB, withheld for encrypted jobs; an unserialisable value is dropped and reported. */
  private resultFields(job: JobPayload, result: unknown): StatusFields {
    if (result === undefined || result === null) return {};
    if (job.has('encrypt')) return { result_withheld: '1' };
    let json: string | undefined;
    try {
      json = JSON.stringify(result);
    } catch (error) {
      this.reportError(error, job.jid, 'result');
      return {};
    }
    if (json === undefined) return {};
    const capped = capUtf8(json, RESULT_CAP_BYTES);
    return capped.truncated ? { result: capped.text, result_truncated: '1' } : { result: capped.text };
  }

  private async guard(jid: string, what: string, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      this.reportError(error, jid, what);
    }
  }
}

/** A payload time of either dialect as the row's float epoch seconds. */
function epochText(value: unknown): string | undefined {
  const seconds = toEpochSeconds(value);
  return seconds === undefined ? undefined : floatText(seconds);
}

function errorFields(error: unknown, reason: string | undefined): StatusFields {
  const fields: StatusFields = {};
  // The class is named as the retry payload's error_class is, so the row and Sidekiq's Retries page agree.
  if (error !== undefined && error !== null) {
    fields.error_class = errorClassOf(error);
    fields.error_message = errorMessageOf(error);
  }
  // The reason stands in only for a missing message: an undefined reason leaves it missing.
  if (fields.error_message === undefined) fields.error_message = reason;
  if (fields.error_message !== undefined)
    fields.error_message = capUtf8(fields.error_message, ERROR_MESSAGE_CAP_BYTES).text;
  return fields;
}
