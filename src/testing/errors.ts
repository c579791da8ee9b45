import { WurkError } from '../job/errors';

/** `performOne` on a queue (or worker) with nothing enqueued, as Sidekiq's EmptyQueueError. */
export class EmptyQueueError extends WurkError {}

/** A mode block inside another one: the outer block's mode would silently change under it. */
export class TestModeAlreadySetError extends WurkError {}

/** `expectEnqueued` found no job of that worker with those args; the message lists what was enqueued. */
export class EnqueuedAssertionError extends WurkError {}
