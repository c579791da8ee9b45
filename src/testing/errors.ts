import { WurkError } from '../job/errors';

/** `performOne` on a queue (or worker) with nothing enqueued, as Sidekiq's EmptyQueueError. */
export class EmptyQueueError extends WurkError {}

/** A mode block inside another one: the outer block's mode would silently change under it. */
export class TestModeAlreadySetError extends WurkError {}

/** `expectEnqueued` found no job of that worker with those args; the message lists what was enqueued. */
export class EnqueuedAssertionError extends WurkError {}

/**
 * A test called something that reads or writes Redis (the admin API, a
 * queue's size, the HTTP API's admin routes, a health probe…) under
 * WurkTestingModule, which runs none: the message names the call. Such a
 * test needs WurkModule.forRoot and a redis-server (see docs/testing.md).
 */
export class TestingNeedsRedisError extends WurkError {}
