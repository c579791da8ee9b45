import type { JobPayload } from '../job/payload';
import { errorMessageOf } from './retry/error-fields';
import type { ServerLogger } from './server-logger';
import type { JobLifecycleListener, JobOutcome, ServerContext } from './server-middleware';

/** The job lifecycle events of this process, one per outcome kind plus the start. */
export const JOB_EVENTS = [
  'started',
  'completed',
  'failed',
  'retrying',
  'dead',
  'interrupted',
  'rescheduled',
  'expired',
] as const;
/**
 * The events `@OnJobEvent` can hear: `started`, and one per outcome (`completed`, `retrying`, `dead`, `failed`,
 * `interrupted`, `rescheduled`, `expired`).
 */
export type JobEventName = (typeof JOB_EVENTS)[number];

/** What a job event handler receives. */
export interface JobEvent {
  event: JobEventName;
  jid: string;
  queue: string;
  /** The payload's `class`. */
  className: string;
  /** 1 for the first run, then retry_count + 2. */
  attempt: number;
  /** The payload as fetched (read-only: the job's fate is already written). */
  job: JobPayload;
  /** Undefined for `started`. */
  outcome?: JobOutcome;
}

/** A method decorated with `@OnJobEvent`: called with each event, detached from the job (errors are logged). */
export type JobEventHandler = (event: JobEvent) => unknown;

const EVENT_OF_OUTCOME: Record<JobOutcome['kind'], JobEventName> = {
  complete: 'completed',
  failed: 'failed',
  retrying: 'retrying',
  dead: 'dead',
  interrupted: 'interrupted',
  rescheduled: 'rescheduled',
  expired: 'expired',
};

/**
 * Turns the processor's lifecycle hooks into named events for handlers.
 * Handlers run after the job's fate is decided and written, detached from
 * the processor: a slow or failing handler neither holds the slot nor
 * changes anything; its error is logged.
 */
export class JobEventDispatcher implements JobLifecycleListener {
  private readonly handlers = new Map<JobEventName, JobEventHandler[]>();

  constructor(private readonly logger: ServerLogger) {}

  /**
   * Adds a handler for one event name (several may hear the same event, in the
   * order added). Returns the dispatcher, for chaining. The handler runs a
   * microtask after the event, detached: its result is not awaited by the job
   * and its rejection is logged.
   */
  on(event: JobEventName, handler: JobEventHandler): this {
    const list = this.handlers.get(event) ?? [];
    list.push(handler);
    this.handlers.set(event, list);
    return this;
  }

  get size(): number {
    let count = 0;
    for (const list of this.handlers.values()) count += list.length;
    return count;
  }

  /** Emits `started` to its handlers, before `perform` runs; returns at once without waiting for them. */
  onStart(context: ServerContext): void {
    this.emit('started', context, undefined);
  }

  /**
   * Emits the event named by the outcome (`completed`, `retrying`, `dead`,
   * `failed`, `interrupted` or `rescheduled`) once the job's fate is written;
   * returns at once without waiting for the handlers.
   */
  onSettled(context: ServerContext, outcome: JobOutcome): void {
    this.emit(EVENT_OF_OUTCOME[outcome.kind], context, outcome);
  }

  private emit(name: JobEventName, context: ServerContext, outcome: JobOutcome | undefined): void {
    const handlers = this.handlers.get(name);
    if (!handlers) return;
    const event: JobEvent = {
      event: name,
      jid: context.job.jid,
      queue: context.queue,
      className: context.job.className,
      attempt: context.attempt,
      job: context.job,
      outcome,
    };
    for (const handler of handlers) {
      // A microtask later, so a handler's synchronous work is not part of the processor's turn either.
      void Promise.resolve()
        .then(() => handler(event))
        .catch((error) =>
          this.logger.error(`job event handler for ${name} of ${event.jid} failed (ignored): ${errorMessageOf(error)}`),
        );
    }
  }
}
