import { WurkError } from '../job/errors';

/** `performOne` on a queue (or worker) with nothing enqueued, as Sidekiq's EmptyQueueError. */
export class EmptyQueueError extends WurkError {}

/** A mode block inside another one: the outer block's mode would silently change under it. */
export class TestModeAlreadySetError extends WurkError {}

/** `expectEnqueued` found no job of that worker with those args; the message lists what was enqueued. */
export class EnqueuedAssertionError extends WurkError {}

/**
 * A drain, or an inline push and everything it pushed meanwhile, passed its
 * bound of jobs: a job that enqueues itself (or its kind) forever. Raised
 * instead of running until the heap dies.
 */
export class RunawayJobsError extends WurkError {
  constructor(
    readonly limit: number,
    where: 'drain' | 'inline',
  ) {
    super(
      where === 'drain'
        ? `drain stopped after ${limit} jobs: a job keeps enqueuing more`
        : `inline mode stopped after ${limit} jobs run for one push: a job keeps enqueuing more (a job that enqueues itself runs once per push, not forever)`,
    );
  }
}

/**
 * A test called something that reads or writes Redis (the admin API, a
 * queue's size, the HTTP API's admin routes, a health probe…) under
 * WurkTestingModule, which runs none: the message names the call. Such a
 * test needs WurkModule.forRoot and a redis-server (see docs/testing.md).
 */
export class TestingNeedsRedisError extends WurkError {}
