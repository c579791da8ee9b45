import type { ClaimedJob } from '../../src/server/fetch/claimed-job';
import type { NotStarted } from '../../src/server/fetch/fetcher';
import { ReliableFetch } from '../../src/server/fetch/reliable/reliable-fetch';

/**
 * Holds every start of a claimed job after it landed in Redis, its answer
 * unread, until the test releases it: what the capsule does with a start
 * that comes back after the world moved on (a stop, a pause).
 */
export function holdStarts() {
  const original = ReliableFetch.prototype.start;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let landed!: (job: ClaimedJob) => void;
  const firstLanded = new Promise<ClaimedJob>((resolve) => (landed = resolve));
  jest.spyOn(ReliableFetch.prototype, 'start').mockImplementation(async function (
    this: ReliableFetch,
    job,
  ): Promise<ClaimedJob | null | NotStarted> {
    const answer = await original.call(this, job);
    landed(job);
    await released;
    return answer;
  });
  return { firstLanded, release };
}
