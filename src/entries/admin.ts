/**
 * `nestjs-wurk/admin`: Sidekiq's API classes over Redis, without Nest (the
 * Nest app reaches the same through `AdminService`). One class per Redis
 * structure, as Sidekiq's `api.rb`: Stats, Queue, the sorted sets
 * (Scheduled, Retry, Dead), ProcessSet, WorkSet and Health, and Sidekiq
 * Pro's BatchSet, with `WurkAdmin` building them all from one ioredis client.
 */
export { WurkAdmin } from '../admin/wurk-admin';
export type { WurkAdminOptions } from '../admin/wurk-admin';
export { Stats, MAX_HISTORY_DAYS } from '../admin/stats';
export type { FastStats, SlowStats, StatsHistoryDay } from '../admin/stats';
export { Queue } from '../admin/queue';
export type { QueueSummary, QueuedJob, PauseListener } from '../admin/queue';
export { QueueList } from '../admin/queue-list';
export { JobSet } from '../admin/job-set';
export type { EntryRef, ScanPage, JobSetOptions } from '../admin/job-set';
export { ScheduledSet } from '../admin/scheduled-set';
export { RetrySet } from '../admin/retry-set';
export { DeadSet } from '../admin/dead-set';
export type { JobRecord, SortedEntry } from '../admin/job-record';
export { readJobRecord, entryId, parseEntryId } from '../admin/job-record';
export type { Page, PageRequest } from '../admin/page';
export { DEFAULT_PAGE_COUNT, MAX_PAGE_COUNT, resolvePage } from '../admin/page';
export { AlreadyDeadError, MalformedEntryError } from '../admin/errors';
export { ProcessSet } from '../admin/process-set';
export type { ProcessRecord, SignalResult } from '../admin/process-set';
export { WorkSet } from '../admin/work-set';
export type { WorkRecord } from '../admin/work-set';
export { Health, STALE_AFTER_SECONDS } from '../admin/health';
export type { HealthReport } from '../admin/health';
export type { DeadTrim } from '../job/dead-trim';
export { LimiterSet } from '../admin/limiter-set';
export type { LimiterInfo, LimiterListRequest } from '../admin/limiter-set';
export type { LimiterLimits } from '../admin/limiter-use';
export { BatchSet, BATCH_TAG_READ_CAP } from '../admin/batch-set';
export type { BatchCallbackInfo, BatchDetails, BatchPage, BatchPageRequest, BatchSummary } from '../admin/batch-set';
