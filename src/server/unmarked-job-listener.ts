import type { JobLifecycleListener } from './server-middleware';

/**
 * Carried by wurk's own listeners that answer a job bearing none of their
 * marks (no `track`, no unique lock, no periodic slot) with no effect at
 * all. Only those hear the boot warm-up's made-up job, so their first call
 * is compiled at boot rather than on the first real job's way to perform
 * (about 0.1 ms). The application's listeners never carry it: they must only
 * ever hear real jobs.
 */
export const IGNORES_UNMARKED_JOBS: unique symbol = Symbol('wurk.ignoresUnmarkedJobs');

export interface IgnoresUnmarkedJobs {
  readonly [IGNORES_UNMARKED_JOBS]: true;
}

export function ignoresUnmarkedJobs(listener: JobLifecycleListener): boolean {
  return (listener as Partial<IgnoresUnmarkedJobs>)[IGNORES_UNMARKED_JOBS] === true;
}
