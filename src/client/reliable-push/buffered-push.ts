/**
 * What is done with one buffered push apart from the transport's state: it is built from its record, counted and
 * described for the reports, and, before it is sent, looked for in Redis (a push read back from a journal may be
 * there already) and its unique locks taken. Everything here reads a push and Redis, never the buffer or the drain.
 */
import type Redis from 'ioredis';
import { JobPayload } from '../../job/payload';
import { Keys } from '../../redis/keys';
import { isUnreachable } from '../../redis/redis-errors';
import type { BufferedPush } from './push-buffer';
import { PushOp, textsOf } from './push-record';
import { takeUniqueClaim } from './unique-claim';

function byteLength(texts: readonly string[]): number {
  let bytes = 0;
  for (const text of texts) bytes += Buffer.byteLength(text);
  return bytes;
}

export function newPush(op: PushOp, bufferedAt: number): BufferedPush {
  const texts = textsOf(op);
  return { op, texts, bytes: byteLength(texts), bufferedAt, skipped: new Set(), prepared: false, halted: 0 };
}

export function jobsOf(pushes: readonly BufferedPush[]): number {
  return pushes.reduce((sum, push) => sum + push.texts.length, 0);
}

/** The jids of a push, read from its payload texts (only for a report: a failure path). */
export function jidsOf(push: BufferedPush): string[] {
  return push.texts.map((text) => {
    try {
      return String((JSON.parse(text) as { jid?: unknown }).jid);
    } catch {
      return '?';
    }
  });
}

/** "first: HardWorker jid abc…" for a report of dropped pushes. */
export function describeFirst(pushes: readonly BufferedPush[]): string {
  const text = pushes[0]?.texts[0];
  if (text === undefined) return 'none';
  try {
    const job = JSON.parse(text) as { class?: unknown; jid?: unknown };
    return `the first: ${String(job.class)} jid ${String(job.jid)}`;
  } catch {
    return 'the first unreadable';
  }
}

/**
 * Which jobs of a recovered push are in Redis already, by index. Each LPUSH and each ZADD applies whole, so one
 * member per command tells for all of it: the newest payload of each queue's LPUSH (LPOS, a scan of the list,
 * done once per journal file read back) and any member of the ZADD (ZSCORE). A job a worker already took from its
 * queue is not found, and is sent again.
 */
export async function alreadyInRedis(redis: Redis, op: PushOp): Promise<Set<number>> {
  const found = new Set<number>();
  const groups = redisGroups(op);
  for (const { key, member, indexes, list } of groups) {
    let present: boolean;
    try {
      present = list ? (await redis.lpos(key, member)) !== null : (await redis.zscore(key, member)) !== null;
    } catch (error) {
      if (isUnreachable(error)) throw error;
      // A key of another type, a Redis without LPOS: cannot tell, so it is sent (at least once).
      present = false;
    }
    if (present) for (const index of indexes) found.add(index);
  }
  return found;
}

/** The Redis commands a push's jobs land in: the key, one member of each command, and the jobs each carries. */
function redisGroups(op: PushOp): Array<{ key: string; member: string; list: boolean; indexes: number[] }> {
  switch (op.kind) {
    case 'one':
      return [{ key: Keys.queue(op.queue), member: op.text, list: true, indexes: [0] }];
    case 'scheduledOne':
      return [{ key: Keys.schedule, member: op.text, list: false, indexes: [0] }];
    case 'rendered': {
      const texts = textsOf(op);
      return [
        {
          key: op.scheduled ? Keys.schedule : Keys.queue(op.queue),
          member: texts[texts.length - 1],
          list: !op.scheduled,
          indexes: texts.map((_, index) => index),
        },
      ];
    }
    case 'jobs': {
      const byQueue = new Map<string, number[]>();
      op.immediate.forEach((job, index) => {
        const queue = JobPayload.parse(job.text).queue;
        let indexes = byQueue.get(queue);
        if (!indexes) byQueue.set(queue, (indexes = []));
        indexes.push(index);
      });
      const groups = [...byQueue].map(([queue, indexes]) => ({
        key: Keys.queue(queue),
        // LPUSH puts its last member nearest the head, where a worker takes last.
        member: op.immediate[indexes[indexes.length - 1]].text,
        list: true,
        indexes,
      }));
      if (op.scheduled.length > 0)
        groups.push({
          key: Keys.schedule,
          member: op.scheduled[0].text,
          list: false,
          indexes: op.scheduled.map((_, index) => op.immediate.length + index),
        });
      return groups;
    }
  }
}

/** Takes the unique locks of the jobs not skipped; resolves to the indexes of those whose lock another jid holds. */
export async function takeLocks(redis: Redis, push: BufferedPush): Promise<number[]> {
  const { op } = push;
  if (op.kind !== 'jobs') return [];
  const lost: number[] = [];
  const jobs = [...op.immediate, ...op.scheduled];
  for (let index = 0; index < jobs.length; index++) {
    const lock = jobs[index].lock;
    if (lock && !push.skipped.has(index) && !(await takeUniqueClaim(redis, lock))) lost.push(index);
  }
  return lost;
}
