import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { RunningLockListener } from '../periodic/running-lock-listener';
import { PeriodicService } from './periodic.service';
import { WURK_RESOLVED_OPTIONS } from './tokens';
import type { ResolvedWurkOptions } from './wurk-options';

/**
 * Starts the ticker once the app is up and stops it before connections
 * close (`beforeApplicationShutdown` runs ahead of every
 * `onApplicationShutdown`), so no claim or push races the shutdown.
 */
@Injectable()
export class PeriodicLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  /** Keeps until_executed locks in step with their jobs; registered with the processing plane. */
  readonly listener: RunningLockListener;
  private readonly logger = new Logger('WurkPeriodic');

  constructor(
    private readonly periodic: PeriodicService,
    @Inject(WURK_RESOLVED_OPTIONS) private readonly options: ResolvedWurkOptions,
  ) {
    this.listener = new RunningLockListener(periodic.store, this.logger);
  }

  /** On when forced by `periodicTicker`, else exactly when this app processes jobs. */
  get tickerEnabled(): boolean {
    if (this.options.periodicTicker !== undefined) return this.options.periodicTicker;
    return (this.options as { processing?: unknown }).processing !== false;
  }

  onApplicationBootstrap(): void {
    if (!this.tickerEnabled || this.periodic.entries().length === 0) return;
    this.periodic.start();
    this.logger.log(`ticking ${this.periodic.entries().length} periodic entr${this.periodic.entries().length === 1 ? 'y' : 'ies'} every ${this.options.tickInterval}s`);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.listener.stop();
    await this.periodic.stop();
  }
}
