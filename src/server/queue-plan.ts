import type { CapsuleGroup, CapsuleSpec } from './capsules';
import type { QueueSpec } from './queue-order';

/** Something of this process that pushes to a queue: a registered worker or a periodic entry. */
export interface QueueUser {
  /** For messages: `@Worker(WelcomeMailWorker)` or `periodic[0]`. */
  who: string;
  queue: string;
}

/**
 * The default group's queues when the app lists none: `default`, then every
 * queue its workers and periodic entries push to that no capsule processes,
 * each weighted 1 (a random order per fetch, so none starves behind
 * another). A worker's own queue is consumed without listing it, as a
 * @nestjs/bullmq user expects; only `default` alone stays the strict
 * `['default']` Sidekiq starts with.
 */
export function defaultGroupQueues(users: readonly QueueUser[], capsules: readonly CapsuleSpec[] = []): QueueSpec {
  const owned = new Set(
    capsules.flatMap((capsule) =>
      (capsule.queues as ReadonlyArray<string | readonly [string, number]>).map((entry) =>
        typeof entry === 'string' ? entry : entry[0],
      ),
    ),
  );
  const names = [...new Set(['default', ...users.map((user) => user.queue)])].filter(
    (queue) => queue === 'default' || !owned.has(queue),
  );
  if (names.length === 1) return ['default'];
  return names.map((queue) => [queue, 1] as const);
}

/** The users whose queue no group of this process fetches: their jobs would wait for another process, or forever. */
export function unfetchedQueueUsers(users: readonly QueueUser[], groups: readonly CapsuleGroup[]): QueueUser[] {
  const fetched = new Set(groups.flatMap((group) => group.order.names));
  return users.filter((user) => !fetched.has(user.queue));
}

/** `default 1, mail 1 (weighted)`, or `critical, default (strict)`. */
export function describeGroupQueues(group: CapsuleGroup): string {
  const names = group.order.strict
    ? group.order.names.join(', ')
    : group.order.names.map((queue) => `${queue} ${group.order.weights[queue]}`).join(', ');
  return `${names} (${group.order.strict ? 'strict' : 'weighted'})`;
}

/**
 * The one line a processing process logs at boot: what it fetches, how
 * many at once, how, and from where (no password), the first thing to read
 * when a job "never runs".
 */
export function bootLine(groups: readonly CapsuleGroup[], fetch: string, redis: string, listed: boolean): string {
  const capsules = groups.map(
    (group) =>
      `${groups.length > 1 ? `capsule ${group.name}: ` : ''}queues ${describeGroupQueues(group)}, concurrency ${group.concurrency}`,
  );
  const source = listed ? '' : ' [queues from the registered workers and periodic entries; set `queues` to choose]';
  return `processing ${capsules.join('; ')}; ${fetch} fetch; Redis ${redis}${source}`;
}
