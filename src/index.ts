/**
 * The application surface of nestjs-wurk: what an app imports to declare
 * workers, push and track jobs, schedule periodic ones, limit, mount the HTTP
 * API and the dashboard, and write middleware. Sidekiq's API classes are in
 * `nestjs-wurk/admin`; the parts an embedder wires by hand (the process
 * plane without Nest, the status, periodic and unique listeners, Redis key
 * names) are in `nestjs-wurk/internals`. See docs/package-entries.md.
 */

// --- The module, workers and jobs ---------------------------------------------------
export { WurkModule } from './nest/wurk.module';
export type { WurkModuleOptions } from './config/module-options';
export { Worker } from './nest/worker.decorator';
export type { WorkerOptions, JobHash, BulkJobHash } from './job/job-hash';
export { JobContext } from './nest/job-context';
export { JobPayload } from './job/payload';
export type { RetryInResult } from './server/retry/failure-plan';

// --- Producing ----------------------------------------------------------------------
export { ClientService } from './nest/client.service';
export type { JobOverrides, ClientContext, ClientMiddleware, ClientMiddlewareFn } from './client/client';
export type { Duration } from './client/schedule-time';
export type { UniqueUntil } from './unique/unique-options';

// --- Status and events --------------------------------------------------------------
export { StatusService } from './nest/status.service';
export type { StatusRecord, StatusState } from './status/status-record';
export type { AttemptRecord } from './job/attempt-record';
export { StatusWaitTimeoutError } from './status/status-wait';
export type { WaitForOptions } from './status/status-wait';
export { OnJobEvent } from './nest/job-events.decorator';
export type { JobEvent, JobEventName, JobEventHandler } from './server/job-events';

// --- Periodic jobs, limiters, admin -------------------------------------------------
export { Periodic } from './nest/periodic.decorator';
export type { PeriodicOptions } from './nest/periodic.decorator';
export { PeriodicService } from './nest/periodic.service';
export { LimiterService } from './nest/limiter.service';
export { ConcurrentLimiter } from './limiter/concurrent-limiter';
export type { ConcurrentLimiterOptions } from './limiter/concurrent-limiter';
export { WindowLimiter } from './limiter/window-limiter';
export type { LimiterInterval, WindowLimiterOptions } from './limiter/window-limiter';
export { OverLimitError } from './limiter/over-limit-error';
export { AdminService } from './nest/admin.service';

// --- Processing ---------------------------------------------------------------------
export { WurkServer } from './nest/wurk-server';
export type { ServerContext, ServerMiddleware, ServerMiddlewareFn, JobOutcome } from './server/server-middleware';

// --- HTTP API and dashboard ---------------------------------------------------------
export { WurkApiModule } from './nest/http/wurk-api.module';
export type { WurkApiModuleOptions } from './nest/http/wurk-api.module';
export type { ApiRateLimitOption, ApiScope, ApiTokenOption, WurkApiOptions } from './api/api-options';
export { WURK_BEARER_SCHEME } from './nest/http/openapi.decorators';
export { isWurkApiRoute } from './nest/http/is-wurk-api-route';
export { WurkDashboardModule } from './nest/dashboard/wurk-dashboard.module';
export type { WurkDashboardModuleOptions } from './nest/dashboard/wurk-dashboard.module';

// --- Options and errors -------------------------------------------------------------
export type { RedisConnectionOptions } from './redis/connection';
export { WurkError, WurkConfigError, InvalidJobError } from './job/errors';
export { InvalidScheduleError } from './client/schedule-time';
export { CommandInDoubtError, PartlyAppliedError, RedisUnavailableError } from './redis/redis-errors';
