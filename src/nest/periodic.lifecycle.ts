import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { RunningLockListener } from '../periodic/running-lock-listener';
import { PeriodicService } from './periodic.service';
import { WURK_RESOLVED_OPTIONS } from './tokens';
import { WurkServer } from './wurk-server';
import type { ResolvedWurkOptions } from './wurk-options';

/** Added to `orphanThreshold` for a performing job's running lock: Cogworker's two extra minutes (60 + 60 s). */
const ACTIVE_LOCK_MARGIN = 120;

/** How long shutdown waits for a tick in progress (it runs beside the drain; see Manager's SHUTDOWN_LOOPS_MS). */
const TICKER_STOP_MS = 1000;

/**
 * Starts the ticker once the app is up and the first orphan check has run
 * (`WurkServer.ready`: a recovered until_executed job must have re-taken its
 * running lock before a tick could think the entry idle), and stops it
 * before connections close (`beforeApplicationShutdown` runs ahead of every
 * `onApplicationShutdown`), so no claim or push races the shutdown.
 */
@Injectable()
export class PeriodicLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  /** Keeps until_executed locks in step with their jobs; WurkLifecycle adds it to the processing plane. */
  readonly listener: RunningLockListener;
  private readonly logger = new Logger('WurkPeriodic');

  constructor(
    private readonly periodic: PeriodicService,
    private readonly server: WurkServer,
    @Inject(WURK_RESOLVED_OPTIONS) private readonly options: ResolvedWurkOptions,
  ) {
    this.listener = new RunningLockListener(periodic.store, this.logger, {
      activeTtl: options.orphanThreshold + ACTIVE_LOCK_MARGIN,
      refreshEvery: options.heartbeatInterval,
    });
  }

  /** On when forced by `periodic.ticker`, else exactly when this app processes jobs. */
  get tickerEnabled(): boolean {
    return this.options.periodicTicker ?? this.server.processing;
  }

  onApplicationBootstrap(): void {
    const count = this.periodic.entries().length;
    if (!this.tickerEnabled || count === 0) return;
    this.periodic.start(this.server.ready, () => this.server.isQuiet);
    this.logger.log(`ticking ${count} periodic entr${count === 1 ? 'y' : 'ies'} every ${this.options.tickInterval}s`);
  }

  /**
   * A tick caught mid-command while Redis is away would wait out ioredis's
   * reconnects (seconds each); the shutdown waits for it only so long. A
   * tick cut short leaves what a crash would: a slot claimed and not
   * pushed, which its rollback record or the next tick elsewhere takes up.
   */
  async beforeApplicationShutdown(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const stopped = this.periodic.stop().then(() => true);
    const gaveUp = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), TICKER_STOP_MS)));
    if (!(await Promise.race([stopped, gaveUp])))
      this.logger.warn(`shutdown: gave up waiting on Redis for the periodic tick in progress`);
    clearTimeout(timer);
  }

  /** After the drain: jobs still performing during it keep their locks refreshed. */
  onApplicationShutdown(): void {
    this.listener.stop();
  }
}
