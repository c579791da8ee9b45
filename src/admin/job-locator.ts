import type { StatusRecord } from '../status/status-record';
import type { JobRecord, SortedEntry } from './job-record';
import type { JobSet } from './job-set';
import type { QueuedJob } from './queue';
import type { QueueList } from './queue-list';
import type { WorkRecord } from './work-set';

/** One place a jid was found. A job is normally in one; a race or a duplicate push can show it in two. */
export type JobLocation =
  | { where: 'queue'; queue: string; position: number; job: QueuedJob }
  | { where: 'schedule' | 'retry' | 'dead'; entry: SortedEntry }
  | { where: 'busy'; work: WorkRecord };

export interface JobLocations {
  jid: string;
  locations: JobLocation[];
  /** The status row of a tracked job (`@Worker({ track: true })`), else null. */
  status: StatusRecord | null;
}

export interface JobLocatorSources {
  queues: QueueList;
  scheduled: JobSet;
  retries: JobSet;
  dead: JobSet;
  work: { find(jid: string): Promise<WorkRecord[]> };
  status: { get(jid: string): Promise<StatusRecord | null> };
}

/**
 * Where a job is, by jid, in every structure Sidekiq keeps one in: each
 * queue listed in `queues`, `schedule`, `retry`, `dead`, the in-flight work
 * of live processes, and the status row. Each look is a scan (LRANGE chunks,
 * ZSCAN), linear in the size of what it reads: an operator's lookup, not a
 * poll. A finished, untracked job is found nowhere, and says so.
 */
export class JobLocator {
  constructor(private readonly sources: JobLocatorSources) {}

  async locate(jid: string): Promise<JobLocations> {
    const { queues, scheduled, retries, dead, work, status } = this.sources;
    const names = (await queues.names()).sort();
    const [queued, sets, busy, row] = await Promise.all([
      Promise.all(names.map((name) => queues.queue(name).find(jid))),
      Promise.all([scheduled, retries, dead].map((set) => set.find(jid))),
      work.find(jid),
      status.get(jid),
    ]);
    const locations: JobLocation[] = [];
    queued.forEach(
      (job, index) => job && locations.push({ where: 'queue', queue: names[index], position: job.position, job }),
    );
    sets.forEach(
      (entry, index) => entry && locations.push({ where: (['schedule', 'retry', 'dead'] as const)[index], entry }),
    );
    for (const running of busy) locations.push({ where: 'busy', work: running });
    return { jid, locations, status: row };
  }
}

/** The stored job of a location, whichever structure holds it. */
export function jobOfLocation(location: JobLocation): JobRecord {
  return location.where === 'queue' ? location.job : location.where === 'busy' ? location.work.job : location.entry;
}
