import type Redis from 'ioredis';
import type { ClientContext } from '../client/client';
import { collapsePolicyOf, CollapseOption } from '../job/collapse-policy';
import { checkNames } from '../job/normalize';
import type { JobPayload } from '../job/payload';
import { uniqueDigest } from '../job/unique-digest';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';

/**
 * Seconds `debounce:<digest>` outlives the member it records, Ruby Wurk's value: the hash must last until the poller
 * has promoted a due member (else the next push adds a second one), and an outlived hash reads as a finished burst.
 */
export const DEBOUNCE_GRACE_SECONDS = 300;

/** What a push that did not become a job of its own did, for the log line and the counter. */
export interface CollapsedPush {
  policy: CollapseOption['policy'];
  /** The collapsed job's class, queue and jid. */
  className: string;
  queue: string;
  jid: string;
  /** Debounce: the member it replaced was still pending. Throttle: the jid that holds the slot. */
  replaced?: boolean;
  holder?: string;
}

/** Ordinary jobs skip the middleware before it runs, so their pushes keep the fast path. */
export function carriesCollapse(job: JobPayload): boolean {
  return job.has('collapse');
}

/**
 * Client middleware of Wurk's collapse policies. A debounced push is written here, straight into `schedule` by
 * `lua/debounce.lua`, and halts the chain: the push resolves to null, because the jid it was written under stops
 * existing at the next push of the burst. A throttled push that wins its slot goes on as an ordinary push; one that
 * loses halts (null). Registered innermost, so the job is written as the app's own middleware left it, and the digest
 * is Ruby Wurk's, so pushes from Ruby and from here collapse together.
 */
export function collapseClientMiddleware(
  redis: Redis,
  onCollapsed?: (push: CollapsedPush) => void,
): (context: ClientContext, next: () => Promise<void>) => Promise<void> {
  return async (context, next) => {
    const policy = collapsePolicyOf(context.job);
    if (!policy) return next();
    if (policy.policy === 'debounce') {
      const replaced = await debounce(redis, context.job, policy.wait, policy.max_wait ?? 0);
      onCollapsed?.({ policy: 'debounce', ...identity(context.job), replaced });
      return;
    }
    const holder = await throttle(redis, context.job, policy.slot);
    if (holder === context.job.jid) return next();
    onCollapsed?.({ policy: 'throttle', ...identity(context.job), holder });
  };
}

function identity(job: JobPayload): Pick<CollapsedPush, 'className' | 'queue' | 'jid'> {
  return { className: job.className, queue: job.queue, jid: job.jid };
}

/** Writes the job as the burst's pending member; true when it replaced one still waiting. */
async function debounce(redis: Redis, job: JobPayload, wait: number, maxWait: number): Promise<boolean> {
  // The client's own write would check these after the middleware; this write happens instead of it.
  checkNames(job);
  const member = job.clone().delete('at').delete('enqueued_at').toString();
  const [replaced] = await runScript<[number, string, string]>(
    redis,
    'debounce',
    [Keys.debounce(uniqueDigest(job)), Keys.schedule],
    [wait, maxWait, member, DEBOUNCE_GRACE_SECONDS],
  );
  return replaced === 1;
}

/** The jid that holds this job's current slot: its own when the push is admitted. */
async function throttle(redis: Redis, job: JobPayload, slot: number): Promise<string> {
  const [, holder] = await runScript<[number, string, string]>(
    redis,
    'throttle_slot',
    [Keys.throttle(uniqueDigest(job))],
    [slot, job.jid],
  );
  return holder;
}
