import { DynamicModule, Inject, Injectable, Module, Optional } from '@nestjs/common';
import type { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { loadPeer } from '../../observability/load-peer';
import {
  HealthSubject,
  WurkHealthOptions,
  WurkHealthProbe,
  WurkHealthReport,
} from '../../observability/health/wurk-health-probe';
import { RedisConnections } from '../../redis/connections';
import { WURK_RESOLVED_OPTIONS } from '../tokens';
import type { ResolvedWurkOptions } from '../wurk-options';
import { WurkServer } from '../wurk-server';

// Loaded when this entry (`nestjs-wurk/health`) is imported, never from the package root.
const terminus = loadPeer<typeof import('@nestjs/terminus')>('@nestjs/terminus', 'nestjs-wurk/health');

export const WURK_HEALTH_OPTIONS = Symbol('wurk:health-options');

/**
 * A @nestjs/terminus indicator for this process's wurk: `isHealthy` (Redis
 * reachable with its RTT, heartbeat age, processors running, each queue's
 * latency under its threshold), and `liveness` / `readiness` for Kubernetes
 * probes. Readiness is false from the start of `app.close()`.
 */
@Injectable()
export class WurkHealthIndicator {
  readonly probe: WurkHealthProbe;

  constructor(
    @Inject(terminus.HealthIndicatorService) private readonly health: HealthIndicatorService,
    connections: RedisConnections,
    server: WurkServer,
    @Inject(WURK_RESOLVED_OPTIONS) options: ResolvedWurkOptions,
    @Optional() @Inject(WURK_HEALTH_OPTIONS) healthOptions?: WurkHealthOptions,
  ) {
    const subject = (): HealthSubject => {
      const { manager, heartbeat } = server;
      return {
        redis: connections.command,
        draining: server.draining,
        processing: manager && {
          queues: manager.queueNames,
          concurrency: manager.concurrency,
          busy: manager.busy,
          running: manager.isRunning,
          quiet: manager.isQuiet,
          heartbeatInterval: options.heartbeatInterval,
          lastBeat: heartbeat?.lastBeat ?? {},
        },
      };
    };
    this.probe = new WurkHealthProbe(subject, healthOptions ?? {});
  }

  /**
   * The full check, under `key` in terminus's result: up when Redis answers
   * a PING within `timeout` (1 s by default), no worked queue's latency is
   * over its threshold (60 s by default), the processors run, and the last
   * beat that reached Redis is at most `maxHeartbeatAge` old (30 s by default).
   * The details carry the whole report (RTT in ms, ages and latencies in
   * seconds). Never throws: down is a result, for terminus to turn into 503.
   */
  async isHealthy(key = 'wurk'): Promise<HealthIndicatorResult> {
    const report = await this.probe.report();
    return this.result(key, this.probe.isHealthy(report), report);
  }

  /**
   * For a Kubernetes liveness probe: down only when the heartbeat thread has
   * not attempted a beat within `maxHeartbeatAge`, a process that is wedged.
   * Redis being away keeps it up, so an outage never restarts every pod.
   * Details: the heartbeat ages in seconds.
   */
  async liveness(key = 'wurk'): Promise<HealthIndicatorResult> {
    const report = await this.probe.report();
    return this.result(key, this.probe.isLive(report), { heartbeat: report.heartbeat });
  }

  /**
   * For a Kubernetes readiness probe: up while the app is not closing, Redis
   * answers and the processors run (always, in an app that does not process).
   * Down from the start of `app.close()`. Details: draining, redis, processors.
   */
  async readiness(key = 'wurk'): Promise<HealthIndicatorResult> {
    const report = await this.probe.report();
    const { draining, redis, processors } = report;
    return this.result(key, this.probe.isReady(report), { draining, redis, processors });
  }

  private result(key: string, ok: boolean, details: Partial<WurkHealthReport>): HealthIndicatorResult {
    const indicator = this.health.check(key);
    return ok ? indicator.up(details) : indicator.down(details);
  }
}

/** Imports TerminusModule and provides WurkHealthIndicator; needs WurkModule (global) in the app. */
@Module({})
export class WurkHealthModule {
  /**
   * The module with these thresholds (`queueLatency`, `maxHeartbeatAge` in
   * seconds, `timeout` in ms), validated when the indicator is built: a bad
   * one throws WurkConfigError naming it. Importing this entry throws
   * MissingPeerError when @nestjs/terminus is not installed.
   */
  static forRoot(options: WurkHealthOptions = {}): DynamicModule {
    return {
      module: WurkHealthModule,
      imports: [terminus.TerminusModule],
      providers: [{ provide: WURK_HEALTH_OPTIONS, useValue: options }, WurkHealthIndicator],
      exports: [WurkHealthIndicator, terminus.TerminusModule],
    };
  }
}
