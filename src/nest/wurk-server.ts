import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { BatchRecorder } from '../batch/batch-recorder';
import { BatchStore } from '../batch/batch-store';
import { WorkerRegistry } from '../job/worker-registry';
import { RedisConnections } from '../redis/connections';
import { writePolicyFor } from '../redis/durable-write';
import { Heartbeat } from '../server/heartbeat/heartbeat';
import { newProcessIdentity, ProcessIdentity } from '../server/identity';
import { ExecutionCarrier } from '../server/job-execution';
import { JobLog } from '../server/job-log';
import { capsuleGroups, capsuleHeartbeatInfo } from '../server/capsules';
import { Manager } from '../server/manager';
import { bootLine, defaultGroupQueues, QueueUser, unfetchedQueueUsers } from '../server/queue-plan';
import { SERVER_DEFAULTS } from '../server/server-options';
import type { JobLifecycleListener, ServerMiddleware, ServerMiddlewareFn } from '../server/server-middleware';
import { WURK_RESOLVED_OPTIONS } from './tokens';
import type { ResolvedWurkOptions } from './wurk-options';

function packageVersion(): string {
  try {
    return JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/**
 * The processing plane of this app, for other modules' providers: add a
 * server middleware (`use`) or a job lifecycle listener (`addListener`)
 * before the app boots, and wait on `ready` (the first orphan check done;
 * at once in a producer-only app). Processing starts on application
 * bootstrap and drains before the connections close.
 */
@Injectable()
export class WurkServer {
  /** Undefined when `server: { processing: false }`. */
  readonly manager: Manager | undefined;
  readonly identity: ProcessIdentity;
  /** Undefined when `server: { processing: false }`. */
  readonly heartbeat: Heartbeat | undefined;
  private closing = false;
  private readonly logger = new Logger('Wurk');

  constructor(
    private readonly connections: RedisConnections,
    registry: WorkerRegistry,
    @Inject(WURK_RESOLVED_OPTIONS) private readonly options: ResolvedWurkOptions,
    executions: ExecutionCarrier,
  ) {
    this.identity = newProcessIdentity();
    if (!options.processing) return;
    const logger = this.logger;
    const groups = capsuleGroups(options.queues ?? SERVER_DEFAULTS.queues, options.concurrency, options.capsules);
    const heartbeat = (this.heartbeat = new Heartbeat({
      redis: options.redis,
      identity: this.identity,
      info: {
        tag: options.tag,
        labels: options.labels,
        ...capsuleHeartbeatInfo(groups),
        version: packageVersion(),
        startedAt: Date.now() / 1000,
      },
      interval: options.heartbeatInterval,
      ttl: options.heartbeatTtl,
      logger: new Logger('WurkHeartbeat'),
      // The connections' watch logs Redis going away and coming back, once for the whole app.
      reportOutages: false,
      handBackUnstartedAfter: options.fetch === 'reliable' ? options.orphanThreshold : undefined,
    }));
    this.manager = new Manager({
      connections,
      registry,
      heartbeat,
      identity: this.identity,
      options: {
        ...options,
        queues: options.queues ?? SERVER_DEFAULTS.queues,
        logger,
        writes: writePolicyFor(connections.sentinel, options),
        batches: new BatchRecorder(new BatchStore(connections.command)),
      },
      executions,
    });
    if (options.logJobs !== 'none') this.manager.addListener(new JobLog(options.logJobs, logger, registry));
  }

  /**
   * Settles what this process fetches, once the app's workers and periodic
   * entries are known (at bootstrap, before start): without a `queues`
   * option, `default` and their queues; then warns of each whose queue no
   * capsule fetches and logs the boot line.
   */
  planQueues(users: readonly QueueUser[]): void {
    const { manager, heartbeat } = this;
    if (!manager || !heartbeat) return;
    if (this.options.queues === undefined) {
      manager.setQueues(defaultGroupQueues(users, this.options.capsules));
      heartbeat.describe(capsuleHeartbeatInfo(manager.capsuleGroups));
    }
    for (const user of unfetchedQueueUsers(users, manager.capsuleGroups)) {
      this.logger.warn(
        `${user.who} pushes to queue "${user.queue}", which no capsule of this process fetches (queues: ${manager.queueNames.join(', ')}); its jobs wait for a process that lists "${user.queue}" in its queues`,
      );
    }
    this.logger.log(
      bootLine(manager.capsuleGroups, this.options.fetch, this.connections.server, this.options.queues !== undefined),
    );
  }

  /** Resolves once processing is ready (see Manager.ready); at once when this app does not process. */
  get ready(): Promise<void> {
    return this.manager?.ready ?? Promise.resolve();
  }

  get processing(): boolean {
    return this.manager !== undefined;
  }

  /** Appends a server middleware (runs inside the ones added before it). */
  use(middleware: ServerMiddlewareFn | ServerMiddleware): this {
    this.manager?.useMiddleware(middleware);
    return this;
  }

  /** Hears every job start and settle; adding the same listener twice has no effect. */
  addListener(listener: JobLifecycleListener): this {
    this.manager?.addListener(listener);
    return this;
  }

  /** This app paused or resumed `queue` (see Manager.notePaused). */
  notePaused(queue: string, paused: boolean): void {
    this.manager?.notePaused(queue, paused);
  }

  /**
   * True from the first shutdown hook of `app.close()` (before any drain
   * starts), or once a remote TERM began a drain: readiness probes turn
   * false here, so traffic moves away while running jobs finish.
   */
  get draining(): boolean {
    return this.closing || (this.manager?.isStopping ?? false);
  }

  /** Called by the lifecycle at the start of app.close(). */
  markClosing(): void {
    this.closing = true;
  }

  /** True once quieted (locally or from Sidekiq's Web UI); never in a producer-only app. */
  get isQuiet(): boolean {
    return this.manager?.isQuiet ?? false;
  }

  /** Stops fetching; running jobs finish (Sidekiq's Quiet). */
  quiet(): void {
    this.manager?.quiet();
  }
}
