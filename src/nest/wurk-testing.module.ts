import { DynamicModule, Inject, Injectable, Logger, Module, OnModuleInit } from '@nestjs/common';
import { DiscoveryModule, ModuleRef } from '@nestjs/core';
import { collapsePolicyOf } from '../job/collapse-policy';
import { WurkConfigError } from '../job/errors';
import { WorkerRegistry } from '../job/worker-registry';
import { StatusListener } from '../status/status-listener';
import { JobRunner } from '../testing/job-runner';
import { MemoryStatusRows } from '../testing/memory-status';
import { MemoryAttemptsStore } from '../testing/memory-attempts';
import type { AttemptRecord } from '../job/attempt-record';
import { AttemptsListener } from '../history/attempts-listener';
import { TestingTransport, TestMode } from '../testing/testing-transport';
import { RedisConnections } from '../redis/connections';
import { TestingConnections } from '../testing/redis-stand-in';
import { MemoryBatchOutcomes, MemoryBatchStore } from '../testing/memory-batches';
import { AdminService } from './admin.service';
import { BatchService } from './batch.service';
import { ClientService } from './client.service';
import { FlowService } from './flow.service';
import { installEncryption } from './encryption.hooks';
import { LimiterService } from './limiter.service';
import { PeriodicService } from './periodic.service';
import { JobContext } from './job-context';
import { ExecutionCarrier } from '../server/job-execution';
import { resolveEntry } from './resolve-entry';
import { StatusService } from './status.service';
import { TestingServer } from './testing-server';
import { WURK_BATCH_STORE, WURK_PUSH_TRANSPORT, WURK_RESOLVED_OPTIONS } from './tokens';
import { WorkerExplorer } from './worker.explorer';
import { WurkServer } from './wurk-server';
import { resolveOptions, ResolvedWurkOptions, WurkModuleOptions } from './wurk-options';
import { withServerValues } from './process-overrides';

/**
 * The module's options plus the mode; `redis`, `writes`, `api`, `server.processing` and `periodic` are accepted and
 * ignored.
 */
export type WurkTestingOptions = WurkModuleOptions & {
  /** `fake` (default): pushes are collected for the test; `inline`: each push performs its job at once. */
  mode?: TestMode;
};

/**
 * The test's handle on wurk: collected jobs (`jobs`, `expectEnqueued`,
 * `clear`), `drain` and `performOne` through the app's server middleware,
 * and `inline(fn)` / `fake(fn)` to switch mode for one block.
 */
export class WurkTesting extends TestingTransport {
  constructor(
    mode: TestMode,
    runner: JobRunner,
    rows: MemoryStatusRows,
    private readonly history: MemoryAttemptsStore,
  ) {
    super(mode, runner, rows);
  }

  /**
   * The attempts log of a job run here (docs/job-history.md): every failed attempt, and `succeeded` after a failure.
   */
  attempts(jid: string): Promise<AttemptRecord[]> {
    return this.history.read(jid);
  }

  /**
   * Runs `body` in inline mode (Sidekiq::Testing.inline!): each push inside
   * it performs its job at once, scheduled ones too, and a job's error rejects
   * the push. The module's mode is back when it resolves; throws
   * TestModeAlreadySetError inside another `inline` or `fake` block.
   */
  inline<T>(body: () => Promise<T> | T): Promise<T> {
    return this.withMode('inline', body);
  }

  /**
   * Runs `body` in fake mode (Sidekiq::Testing.fake!): pushes inside it are
   * collected for `jobs`, `expectEnqueued` and `drain`, not run. The module's
   * mode is back when it resolves; throws TestModeAlreadySetError inside
   * another `inline` or `fake` block.
   */
  fake<T>(body: () => Promise<T> | T): Promise<T> {
    return this.withMode('fake', body);
  }
}

/** Installs the configured client and server middleware and the in-memory status listener, as WurkLifecycle does. */
@Injectable()
class WurkTestingLifecycle implements OnModuleInit {
  private readonly logger = new Logger('WurkTesting');

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly client: ClientService,
    @Inject(WurkServer) private readonly server: TestingServer,
    private readonly rows: MemoryStatusRows,
    private readonly history: MemoryAttemptsStore,
    @Inject(WURK_RESOLVED_OPTIONS) private readonly options: ResolvedWurkOptions,
    @Inject(WURK_BATCH_STORE) private readonly batches: MemoryBatchStore,
  ) {}

  async onModuleInit(): Promise<void> {
    for (const entry of this.options.clientMiddleware) this.client.use(await resolveEntry(this.moduleRef, entry));
    // Collapse needs Redis and is not applied here (each push is recorded, with its jid); its rules still refuse a bad
    // policy, as in production, so a test does not pass on a push production would refuse.
    this.client.use(
      (context, next) => (collapsePolicyOf(context.job), next()),
      (job) => job.has('collapse'),
    );
    for (const entry of this.options.serverMiddleware) this.server.use(await resolveEntry(this.moduleRef, entry));
    // Sealed in the fakes' jobs as in Redis, opened before perform: encrypted jobs round-trip in both modes.
    installEncryption({ client: this.client, server: this.server }, this.options.encryption);
    const { statusTtl: ttl, statusRetention: retention, progressInterval } = this.options;
    this.server.addListener(
      new StatusListener(this.rows, { ttl, retention, progressInterval }, (error, jid, what) =>
        this.logger.warn(`status ${what} for ${jid} failed: ${String(error)}`),
      ),
    );
    // Jobs of a batch report their outcomes as a processor's do, so callbacks fire (collected, or run inline); a job
    // of an invalidated batch is skipped before any other middleware, as a processor skips it before its chain.
    this.server.addListener(new MemoryBatchOutcomes(this.batches));
    this.server.middleware.prepend(this.batches.skipInvalidated);
    if (this.options.attemptsMax > 0)
      this.server.addListener(
        new AttemptsListener(this.history, (error, jid) =>
          this.logger.warn(`attempts log for ${jid} failed: ${String(error)}`),
        ),
      );
  }
}

/**
 * A drop-in for WurkModule in a `@nestjs/testing` module, with no Redis at
 * all. It provides everything WurkModule exports, so an app that also
 * mounts WurkApiModule, WurkDashboardModule, WurkHealthModule,
 * WurkMetricsModule or WurkTracingModule compiles unchanged; what needs
 * Redis (AdminService, PeriodicService's list, the admin routes, a health
 * probe, FlowService) throws TestingNeedsRedisError when a test calls it.
 * BatchService keeps its batches in memory. Turned on only by importing
 * `WurkTestingModule.forRoot()` from `nestjs-wurk/testing` (never by
 * loading a file), and refused under
 * NODE_ENV=production, where it would keep real jobs in memory and lose them.
 * Every instance has its own jobs and status rows.
 */
@Module({})
export class WurkTestingModule {
  /**
   * A global module in place of `WurkModule.forRoot()`, in `mode` (default
   * `fake`), providing WurkTesting for the test's assertions. Options are
   * validated as WurkModule's; `redis`, the API, processing and periodic
   * options are ignored. Throws WurkConfigError under NODE_ENV=production or
   * for a `mode` other than `fake` or `inline`.
   */
  static forRoot(options: WurkTestingOptions = {}): DynamicModule {
    if (process.env.NODE_ENV === 'production') {
      throw new WurkConfigError(
        'WurkTestingModule',
        'is for tests and refuses NODE_ENV=production, where it would keep jobs in memory',
      );
    }
    const { mode = 'fake', ...moduleOptions } = options;
    if (mode !== 'fake' && mode !== 'inline')
      throw new WurkConfigError('mode', `must be "fake" or "inline" (got ${JSON.stringify(mode)})`);
    const resolved = resolveOptions(moduleOptions, {
      adjust: (grouped) => withServerValues(grouped, { processing: false }),
    });
    return {
      module: WurkTestingModule,
      global: true,
      imports: [DiscoveryModule],
      providers: [
        { provide: WURK_RESOLVED_OPTIONS, useValue: resolved },
        WorkerRegistry,
        WorkerExplorer,
        JobContext,
        ExecutionCarrier,
        { provide: MemoryStatusRows, useFactory: () => new MemoryStatusRows() },
        { provide: StatusService, useExisting: MemoryStatusRows },
        { provide: MemoryAttemptsStore, useFactory: () => new MemoryAttemptsStore(resolved.attemptsMax) },
        { provide: WurkServer, useFactory: () => new TestingServer() },
        {
          provide: WurkTesting,
          inject: [WorkerRegistry, WurkServer, MemoryStatusRows, MemoryAttemptsStore],
          useFactory: (
            registry: WorkerRegistry,
            server: TestingServer,
            rows: MemoryStatusRows,
            history: MemoryAttemptsStore,
          ) =>
            new WurkTesting(
              mode,
              new JobRunner({
                registry,
                middleware: server.middleware,
                listeners: server.listeners,
                maxRetries: resolved.maxRetries,
                timestamps: resolved.timestamps,
                errorHandlers: resolved.errorHandlers,
                deathHandlers: resolved.deathHandlers,
              }),
              rows,
              history,
            ),
        },
        { provide: WURK_PUSH_TRANSPORT, useExisting: WurkTesting },
        ClientService,
        WurkTestingLifecycle,
        // What WurkApiModule, WurkHealthModule, WurkMetricsModule and the dashboard inject, built on a
        // Redis stand-in: the app compiles, and a call that needs Redis throws TestingNeedsRedisError.
        { provide: RedisConnections, useFactory: () => new TestingConnections() },
        AdminService,
        PeriodicService,
        LimiterService,
        // Batches in memory (their callbacks pushed through the client like any job); flows need Redis.
        {
          provide: WURK_BATCH_STORE,
          inject: [ClientService],
          useFactory: (client: ClientService) => new MemoryBatchStore((job) => client.push(job)),
        },
        BatchService,
        FlowService,
      ],
      exports: [
        ClientService,
        StatusService,
        WurkServer,
        JobContext,
        WorkerRegistry,
        WurkTesting,
        WURK_RESOLVED_OPTIONS,
        RedisConnections,
        AdminService,
        PeriodicService,
        LimiterService,
        BatchService,
        FlowService,
      ],
    };
  }
}
