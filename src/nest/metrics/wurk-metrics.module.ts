import { Controller, DynamicModule, Get, Header, Inject, Module, Type } from '@nestjs/common';
import { loadPeer } from '../../observability/load-peer';
import { WurkMetrics, WurkMetricsOptions } from '../../observability/metrics/wurk-metrics';
import { RedisConnections } from '../../redis/connections';
import { AttemptsHooks } from '../attempts.hooks';
import { ReliablePushTransport } from '../../client/reliable-push/reliable-push-transport';
import { ClientService } from '../client.service';
import { CollapseHooks } from '../collapse.hooks';
import { WurkServer } from '../wurk-server';
import { WorkerRegistry } from '../../job/worker-registry';

// Loaded when this entry (`nestjs-wurk/metrics`) is imported, never from the package root.
const prom = loadPeer<typeof import('prom-client')>('prom-client', 'nestjs-wurk/metrics');

/**
 * Options of `WurkMetricsModule.forRoot()`: the metrics' options plus `path` (default `metrics`; `false` mounts no
 * route).
 */
export interface WurkMetricsModuleOptions extends WurkMetricsOptions {
  /** Route that serves the registry in Prometheus' text format (default `metrics`); false mounts nothing. */
  path?: string | false;
}

/** One controller class per mount: path metadata set on a shared class would move every mount. */
function metricsController(path: string, contentType: string): Type {
  @Controller(path)
  class WurkMetricsController {
    constructor(@Inject(WurkMetrics) private readonly metrics: WurkMetrics) {}

    // Returned as a string with its own content type, so Nest sends the text as it is.
    @Get()
    @Header('Content-Type', contentType)
    scrape(): Promise<string> {
      return this.metrics.registry.metrics();
    }
  }
  return WurkMetricsController;
}

/**
 * Prometheus metrics of this process's jobs and pushes (optional peer
 * `prom-client`), served at `/metrics` unless `path: false`. Needs WurkModule.
 * Without this module nothing is counted and no listener or observer is added.
 */
@Module({})
export class WurkMetricsModule {
  /**
   * Provides WurkMetrics on prom-client's global registry (or `registry`) and
   * serves it at `path` (default `metrics`, under the app's global prefix).
   * Counts jobs run and pushed by this process and, at each scrape, reads the
   * queues' size and latency from Redis (cached `queueGaugesCacheMs`). A bad
   * option throws WurkConfigError naming it when the provider is built;
   * importing this entry throws MissingPeerError without prom-client.
   */
  static forRoot(options: WurkMetricsModuleOptions = {}): DynamicModule {
    const { path = 'metrics', ...metricsOptions } = options;
    const registry = metricsOptions.registry ?? prom.register;
    return {
      module: WurkMetricsModule,
      controllers: path === false ? [] : [metricsController(path, registry.contentType)],
      providers: [
        {
          provide: WurkMetrics,
          inject: [
            RedisConnections,
            WurkServer,
            ClientService,
            WorkerRegistry,
            { token: AttemptsHooks, optional: true },
            { token: CollapseHooks, optional: true },
          ],
          useFactory: (
            connections: RedisConnections,
            server: WurkServer,
            client: ClientService,
            workers: WorkerRegistry,
            history: AttemptsHooks | undefined,
            collapse: CollapseHooks | undefined,
          ) => {
            const transport = (client as Partial<ClientService>).transport;
            const subject = {
              redis: connections.command,
              busy: () => server.manager?.busy,
              // Read when a label is first needed: the explorer registers the workers after this factory runs.
              isWorkerClass: (name: string) => workers.get(name) !== undefined,
              // The manager's queues, as planned at bootstrap (the workers' queues when none are listed).
              get fetchedQueues() {
                return server.manager?.queueNames ?? [];
              },
              attemptsWriteFailures: () => history?.listener?.failedWrites,
              reliablePush: transport instanceof ReliablePushTransport ? () => transport.stats : undefined,
            };
            const metrics = new WurkMetrics(prom, subject, { ...metricsOptions, registry });
            server.addListener(metrics.listener);
            // A test may override ClientService with a plain mock.
            if (typeof (client as Partial<ClientService>).onPushed === 'function') client.onPushed(metrics.pushed);
            collapse?.onCollapsed((push) => metrics.collapsed(push.className, push.queue, push.policy));
            return metrics;
          },
        },
      ],
      exports: [WurkMetrics],
    };
  }
}
