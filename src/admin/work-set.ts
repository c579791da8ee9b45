import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { JobRecord, readJobRecord } from './job-record';
import { Page, PageRequest, resolvePage } from './page';
import { setMembers } from './scan';

/** One job in flight (Sidekiq's Work). */
export interface WorkRecord {
  /** Identity of the process running it. */
  process: string;
  /** The processor slot (Sidekiq's tid). */
  tid: string;
  queue?: string;
  /** When it started, epoch seconds (as written at the process's beat). */
  runAt?: number;
  job: JobRecord;
}

function toWork(process: string, tid: string, text: string): WorkRecord {
  let entry: Record<string, unknown> | undefined;
  try {
    const decoded = JSON.parse(text);
    if (decoded && typeof decoded === 'object' && !Array.isArray(decoded)) entry = decoded;
  } catch {
    entry = undefined;
  }
  if (!entry) return { process, tid, job: readJobRecord(text) };
  // Sidekiq writes the payload as a string inside the JSON; older writers stored the object itself.
  const payload = entry.payload;
  const raw = typeof payload === 'string' ? payload : JSON.stringify(payload ?? null);
  const runAt = typeof entry.run_at === 'number' ? entry.run_at : undefined;
  return {
    process,
    tid,
    queue: typeof entry.queue === 'string' ? entry.queue : undefined,
    runAt,
    job: readJobRecord(raw),
  };
}

/**
 * Every job in flight across the live processes (Sidekiq's WorkSet): each
 * process's `<identity>:work` (Sidekiq 7/8) and `<identity>:workers` (6.x),
 * as its heartbeat last wrote them, oldest first and paged. Bounded by the
 * fleet's total concurrency, never by the size of a queue.
 */
export class WorkSet {
  constructor(private readonly redis: Redis) {}

  /**
   * A page of the jobs in flight, oldest start first (Sidekiq's WorkSet#each):
   * reads the work hashes of every member of `processes`, then slices, so
   * `total` is exact. As fresh as each process's last beat (up to 10 s old).
   */
  async list(request?: PageRequest): Promise<Page<WorkRecord>> {
    const { page, count, start } = resolvePage(request);
    const all = await this.all();
    return { page, count, total: all.length, items: all.slice(start, start + count) };
  }

  /** The jobs in flight with this jid: usually one, more when a process runs a duplicate. */
  async find(jid: string): Promise<WorkRecord[]> {
    return (await this.all()).filter((work) => work.job.jid === jid);
  }

  /** Σ `busy` of the live processes, as Sidekiq's WorkSet#size (no work hash read). */
  async size(): Promise<number> {
    const identities = await setMembers(this.redis, Keys.processes);
    if (identities.length === 0) return 0;
    const pipeline = this.redis.pipeline();
    for (const identity of identities) pipeline.hget(Keys.process(identity), 'busy');
    const results = (await pipeline.exec()) ?? [];
    return results.reduce((sum, [error, value]) => sum + (error ? 0 : Number(value ?? 0) || 0), 0);
  }

  private async all(): Promise<WorkRecord[]> {
    const identities = await setMembers(this.redis, Keys.processes);
    if (identities.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const identity of identities) pipeline.hgetall(Keys.work(identity)).hgetall(Keys.workLegacy(identity));
    const results = (await pipeline.exec()) ?? [];
    const work: WorkRecord[] = [];
    identities.forEach((identity, index) => {
      const seen = new Set<string>();
      for (const [error, hash] of [results[index * 2], results[index * 2 + 1]]) {
        if (error || !hash) continue;
        for (const [tid, text] of Object.entries(hash as Record<string, string>)) {
          if (seen.has(tid)) continue;
          seen.add(tid);
          work.push(toWork(identity, tid, text));
        }
      }
    });
    return work.sort(
      (a, b) => (a.runAt ?? 0) - (b.runAt ?? 0) || a.process.localeCompare(b.process) || a.tid.localeCompare(b.tid),
    );
  }
}
