/**
 * `nestjs-wurk/internals`: the parts an embedder wires by hand, for running
 * the process plane without Nest (a script, a custom runner) or extending it.
 * Less stable than the root entry: these follow the engine's structure, and a
 * minor version may reshape them (the CHANGELOG says when).
 */

// --- The process plane without Nest -------------------------------------------------
export { Manager } from '../server/manager';
export type { ManagerDeps } from '../server/manager';
export { SERVER_DEFAULTS } from '../server/server-options';
export type { ServerOptions } from '../server/server-options';
export type { QueueSpec } from '../server/queue-order';
export { newProcessIdentity } from '../server/identity';
export type { ProcessIdentity } from '../server/identity';
export { RedisConnections } from '../redis/connections';
export { WorkerRegistry } from '../job/worker-registry';
export type { RegisteredWorker } from '../job/worker-registry';
export type { PerformArgs, WorkerClass, WorkerInstance } from '../job/worker-definition';
export type { JobLifecycleListener } from '../server/server-middleware';
export type { JobExecution, ProgressReporter } from '../server/job-execution';
export { UnknownWorkerError } from '../server/processor';
export type { DeathHandler, ErrorHandler } from '../server/processor';
export type { RetryHooks } from '../server/retry/failure-plan';
export type { HeartbeatPort, WorkItem, RemoteSignal } from '../server/heartbeat/heartbeat-port';
export { JobEventDispatcher, JOB_EVENTS } from '../server/job-events';

// --- Producing without ClientService ------------------------------------------------
export { Client, ScopedClient } from '../client/client';
export type { PushObserver, PushPipelineHook } from '../client/client';
export { RedisPushTransport } from '../client/push-transport';
export type { PushTransport, ScheduledPush } from '../client/push-transport';
export { WURK_PUSH_TRANSPORT } from '../nest/tokens';
export { ReliablePushTransport } from '../client/reliable-push/reliable-push-transport';
export { RELIABLE_PUSH_DEFAULTS } from '../client/reliable-push/reliable-push-settings';
export type { ReliablePushSettings, ReliablePushStats } from '../client/reliable-push/reliable-push-settings';
export { PushBufferFullError } from '../client/reliable-push/push-buffer-full-error';
export { PushJournalError } from '../client/reliable-push/push-journal-error';
export { uniqueDigest } from '../job/unique-digest';
export { InvalidPayloadError } from '../job/errors';
export { Keys } from '../redis/keys';

// --- Status rows ----------------------------------------------------------------------
export { StatusHooks } from '../nest/status.hooks';
export { StatusWriter, InvalidStatusStateError } from '../status/status-writer';
export type { StatusFields, StatusWriteOptions } from '../status/status-writer';
export { StatusListener } from '../status/status-listener';
export type { StatusErrorReporter } from '../status/status-listener';
export type { StatusOptions } from '../status/status-options';
export { enqueuedRowHook } from '../status/enqueued-row';
export { isTracked } from '../status/tracked';
export { FINAL_STATES } from '../status/status-wait';

// --- Periodic jobs --------------------------------------------------------------------
export { PeriodicManager } from '../periodic/periodic-manager';
export type { PeriodicEntryInfo, PeriodicManagerOptions } from '../periodic/periodic-manager';
export type { PeriodicEntry, PeriodicEntryOptions } from '../periodic/periodic-entry';
export { resolvePeriodicEntry } from '../periodic/periodic-entry';
export { PeriodicTicker } from '../periodic/periodic-ticker';
export type { PeriodicTickerEvents } from '../periodic/periodic-ticker';
export { RunningLockListener } from '../periodic/running-lock-listener';

// --- The HTTP API's Nest parts ----------------------------------------------------------
export { WurkApiService } from '../nest/http/wurk-api.service';
export { WurkApiGuard } from '../nest/http/wurk-api.guard';

/** How an attempt ended (AttemptRecord['outcome']), and the payload time dialect (the `timestamps` option). */
export type { AttemptOutcome } from '../job/attempt-record';
export type { TimestampMode } from '../job/time';
