/** The public surface of nestjs-wurk: everything a user imports comes from here. */
export { WurkModule } from './nest/wurk.module';
export { Worker } from './nest/worker.decorator';
export { ClientService } from './nest/client.service';
export { StatusService } from './nest/status.service';
export type { StatusRecord, StatusState } from './status/status-record';
export { StatusHooks } from './nest/status.hooks';
export { StatusWriter, InvalidStatusStateError } from './status/status-writer';
export type { StatusFields, StatusWriteOptions } from './status/status-writer';
export { StatusListener } from './status/status-listener';
export type { StatusErrorReporter } from './status/status-listener';
export type { StatusOptions } from './status/status-options';
export { enqueuedRowHook } from './status/enqueued-row';
export { isTracked } from './status/tracked';
export type { WurkModuleOptions } from './nest/wurk-options';

export { Client, ScopedClient } from './client/client';
export type { ClientContext, ClientMiddleware, ClientMiddlewareFn, JobOverrides, PushPipelineHook } from './client/client';
export { JobPayload } from './job/payload';
export type { BulkJobHash, JobHash, WorkerOptions } from './job/job-hash';
export type { PerformArgs, WorkerClass, WorkerInstance } from './job/worker-definition';
export type { TimestampMode } from './job/time';
export { InvalidJobError, InvalidPayloadError, WurkConfigError, WurkError } from './job/errors';
export { Keys } from './redis/keys';
export type { RedisConnectionOptions } from './redis/connection';
