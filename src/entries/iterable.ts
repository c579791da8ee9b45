/**
 * `nestjs-wurk/iterable`: iterable jobs, Sidekiq 7.3's `Sidekiq::IterableJob` on the `it-<jid>` hash Ruby reads
 * (docs/iterable-jobs.md). Extend `IterableWorker` in an `@Worker` class; cancel a job with `AdminService.cancel`.
 */
export { IterableWorker } from '../iterable/iterable-worker';
export type { IterationInfo, IterationSource } from '../iterable/iteration-source';
export { arrayEnumerator, asyncIterableEnumerator, batchedCursorEnumerator } from '../iterable/enumerators';
export type { CursorBatch } from '../iterable/enumerators';
export { InvalidIterationStateError, JobInterruptedError } from '../job/iteration-errors';
