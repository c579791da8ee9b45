import { WurkConfigError } from '../job/errors';
import { QueueOrder, QueueSpec } from './queue-order';

/** One queue group with processors of its own (Sidekiq 7's capsule). */
export interface CapsuleSpec {
  name: string;
  queues: QueueSpec;
  /** Jobs of this group in flight at once; default: the module's `concurrency`, as Sidekiq's capsules inherit it. */
  concurrency?: number;
}

/** A capsule after defaults and checks: its queue order built, its concurrency set. */
export interface CapsuleGroup {
  name: string;
  order: QueueOrder;
  concurrency: number;
}

/** Sidekiq's name for the group the top-level `queues`/`concurrency` describe. */
export const DEFAULT_CAPSULE = 'default';

/**
 * The default group (top-level `queues` and `concurrency`, named "default"
 * as in Sidekiq) followed by the `capsules`, checked: names unique and not
 * "default", each capsule's queues valid, and no queue in two groups. Two
 * groups fetching one queue would make "this capsule's jobs never wait on
 * that one's" false, and Sidekiq 8's ProcessSet keeps one weight per queue
 * name, so disjoint queues are required, not merely advised.
 */
export function capsuleGroups(
  queues: QueueSpec,
  concurrency: number,
  capsules: readonly CapsuleSpec[] = [],
): CapsuleGroup[] {
  const groups: CapsuleGroup[] = [{ name: DEFAULT_CAPSULE, order: new QueueOrder(queues), concurrency }];
  const owner = new Map<string, string>(groups[0].order.names.map((queue) => [queue, DEFAULT_CAPSULE]));
  capsules.forEach((capsule, index) => {
    const where = `capsules[${index}]`;
    if (typeof capsule.name !== 'string' || capsule.name.length === 0)
      throw new WurkConfigError(`${where}.name`, 'must be a non-empty string');
    if (capsule.name === DEFAULT_CAPSULE)
      throw new WurkConfigError(
        `${where}.name`,
        `may not be "${DEFAULT_CAPSULE}": that is the group of the top-level queues and concurrency`,
      );
    if (groups.some((group) => group.name === capsule.name))
      throw new WurkConfigError(`${where}.name`, `"${capsule.name}" names two capsules`);
    if (capsule.queues === undefined)
      throw new WurkConfigError(`${where}.queues`, 'is required: the queues this capsule processes');
    const order = withOption(`${where}.queues`, () => new QueueOrder(capsule.queues));
    for (const queue of order.names) {
      const other = owner.get(queue);
      if (other !== undefined) {
        throw new WurkConfigError(
          `${where}.queues`,
          `lists "${queue}", which ${other === DEFAULT_CAPSULE ? 'the top-level queues (capsule "default")' : `capsule "${other}"`} processes already; a queue belongs to one capsule`,
        );
      }
      owner.set(queue, capsule.name);
    }
    groups.push({ name: capsule.name, order, concurrency: capsule.concurrency ?? concurrency });
  });
  return groups;
}

/** QueueOrder names its errors `queues…`; inside a capsule they name the capsule's path. */
function withOption<T>(path: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof WurkConfigError) {
      // Every option QueueOrder names begins with "queues", so the anchor changes no path.
      // Stryker disable next-line Regex
      throw new WurkConfigError(error.option.replace(/^queues/, path), error.reason);
    }
    throw error;
  }
}

/** Capsule name → the queue a worker naming that capsule (and no queue) pushes to: the capsule's first queue. */
export function capsuleDefaultQueues(groups: readonly CapsuleGroup[]): Record<string, string> {
  return Object.fromEntries(groups.map((group) => [group.name, group.order.names[0]]));
}

/**
 * The start-up check of a worker's `capsule`: it must name a group, and a
 * worker that also names its `queue` must name one its capsule processes
 * (otherwise its jobs would run in another capsule, or nowhere).
 */
export function checkWorkerCapsule(
  worker: string,
  capsule: string | undefined,
  queue: string | undefined,
  groups: readonly CapsuleGroup[],
): void {
  if (capsule === undefined) return;
  const group = groups.find((candidate) => candidate.name === capsule);
  if (!group) {
    throw new WurkConfigError(
      `@Worker(${worker}).capsule`,
      `"${capsule}" is not a capsule of this app (capsules: ${groups.map((g) => `"${g.name}"`).join(', ')})`,
    );
  }
  if (queue !== undefined && !group.order.names.includes(queue)) {
    throw new WurkConfigError(
      `@Worker(${worker}).queue`,
      `"${queue}" is not processed by capsule "${capsule}" (its queues: ${group.order.names.join(', ')})`,
    );
  }
}

/**
 * What the heartbeat's `info` says of the groups, as Sidekiq 7 and 8 write
 * it: `concurrency` the sum, `queues` all of them (the default group's
 * first), `weights` one hash per capsule, and the capsules by name.
 */
export function capsuleHeartbeatInfo(groups: readonly CapsuleGroup[]): {
  concurrency: number;
  queues: string[];
  weights: Record<string, number>[];
  capsules: Array<{ name: string; concurrency: number }>;
} {
  return {
    concurrency: groups.reduce((sum, group) => sum + group.concurrency, 0),
    queues: [...new Set(groups.flatMap((group) => group.order.names))],
    weights: groups.map((group) => ({ ...group.order.weights })),
    capsules: groups.map((group) => ({ name: group.name, concurrency: group.concurrency })),
  };
}
