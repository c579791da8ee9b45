import type { JobPayload } from '../job/payload';

/**
 * The opt-in gate, in one place: every status writer asks this first, so an
 * untracked job costs no command at all. `track` rides on the payload (merged
 * in from the worker's options), so a job enqueued before the option was set
 * runs untracked to the end instead of half-tracked. Ruby's truthiness, as a
 * Ruby client may have pushed the job: anything but false, null or absent.
 */
export function isTracked(job: JobPayload): boolean {
  const track = job.get<unknown>('track');
  return track !== undefined && track !== null && track !== false;
}
