import { Logger, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { WorkerRegistry } from '../job/worker-registry';
import { RedisConnections } from '../redis/connections';
import { writePolicyFor } from '../redis/durable-write';
import { AdminService } from './admin.service';
import { JobEventsExplorer } from './job-events.explorer';
import { BatchService } from './batch.service';
import { FlowService } from './flow.service';
import { ClientService } from './client.service';
import { PeriodicExplorer } from './periodic.explorer';
import { PeriodicLifecycle } from './periodic.lifecycle';
import { PeriodicService } from './periodic.service';
import { StatusService } from './status.service';
import { StatusHooks } from './status.hooks';
import { AttemptsHooks } from './attempts.hooks';
import { UniqueHooks } from './unique.hooks';
import { CollapseHooks } from './collapse.hooks';
import { LimiterService } from './limiter.service';
import { RedisPushTransport } from '../client/push-transport';
import { ReliablePushTransport } from '../client/reliable-push/reliable-push-transport';
import { WURK_PUSH_TRANSPORT, WURK_RESOLVED_OPTIONS } from './tokens';
import { WorkerExplorer } from './worker.explorer';
import { WurkLifecycle } from './wurk.lifecycle';
import { WurkServer } from './wurk-server';
import { JobContext } from './job-context';
import { ExecutionCarrier } from '../server/job-execution';
import { WurkConfigurableModule, WURK_MODULE_OPTIONS } from './wurk.module-definition';
import { resolveOptions, ResolvedWurkOptions, WurkModuleOptions } from './wurk-options';
import { withProcessOverrides } from './process-overrides';

/**
 * Sidekiq-compatible background jobs. `WurkModule.forRoot(options)` or
 * `forRootAsync({ imports, inject, useFactory })`; global by default.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: WURK_RESOLVED_OPTIONS,
      inject: [WURK_MODULE_OPTIONS],
      // A standalone worker entry may turn processing on and set concurrency and queues (process-overrides.ts).
      useFactory: (options: WurkModuleOptions) => resolveOptions(options, { adjust: withProcessOverrides }),
    },
    {
      provide: RedisConnections,
      inject: [WURK_RESOLVED_OPTIONS],
      useFactory: (options: ResolvedWurkOptions) => new RedisConnections(options.redis, new Logger('Wurk')),
    },
    {
      provide: WURK_PUSH_TRANSPORT,
      inject: [RedisConnections, WURK_RESOLVED_OPTIONS],
      useFactory: (connections: RedisConnections, options: ResolvedWurkOptions) =>
        options.reliablePush
          ? new ReliablePushTransport(
              connections.command,
              writePolicyFor(connections.sentinel, options),
              () => connections.server,
              options.reliablePush,
              new Logger('WurkClient'),
            )
          : new RedisPushTransport(
              connections.command,
              writePolicyFor(connections.sentinel, options),
              () => connections.server,
            ),
    },
    WorkerRegistry,
    ClientService,
    StatusService,
    BatchService,
    FlowService,
    StatusHooks,
    AttemptsHooks,
    UniqueHooks,
    CollapseHooks,
    LimiterService,
    WorkerExplorer,
    WurkServer,
    JobContext,
    ExecutionCarrier,
    WurkLifecycle,
    PeriodicService,
    PeriodicExplorer,
    PeriodicLifecycle,
    AdminService,
    JobEventsExplorer,
  ],
  exports: [
    AdminService,
    AttemptsHooks,
    CollapseHooks,
    WurkServer,
    JobContext,
    ClientService,
    StatusService,
    BatchService,
    FlowService,
    PeriodicService,
    LimiterService,
    WorkerRegistry,
    RedisConnections,
    WURK_RESOLVED_OPTIONS,
  ],
})
export class WurkModule extends WurkConfigurableModule {
  /** Registers wurk with inline options: `WurkModule.forRoot({ redis: { url }, server: { concurrency: 20 } })`. */
  declare static forRoot: typeof WurkConfigurableModule.forRoot;
  /** Registers wurk with options from a factory: `WurkModule.forRootAsync({ imports, inject, useFactory })`. */
  declare static forRootAsync: typeof WurkConfigurableModule.forRootAsync;
}
