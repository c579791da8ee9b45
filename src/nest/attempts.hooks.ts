import { Inject, Injectable, Logger } from '@nestjs/common';
import { AttemptsListener } from '../history/attempts-listener';
import { RedisAttemptsStore } from '../history/attempts-store';
import { RedisConnections } from '../redis/connections';
import { WURK_RESOLVED_OPTIONS } from './tokens';
import type { ResolvedWurkOptions } from './wurk-options';
import { WurkServer } from './wurk-server';

/**
 * Plugs the attempts log (docs/job-history.md) into the processing plane:
 * its listener appends a record when an attempt fails, after the job is
 * filed. `history: { maxRecords: 0 }` leaves it out.
 */
@Injectable()
export class AttemptsHooks {
  private readonly logger = new Logger('WurkHistory');
  readonly listener: AttemptsListener | undefined;

  constructor(
    connections: RedisConnections,
    server: WurkServer,
    @Inject(WURK_RESOLVED_OPTIONS) options: ResolvedWurkOptions,
  ) {
    if (options.attemptsMax === 0) return;
    const store = new RedisAttemptsStore(connections.command, {
      maxEntries: options.attemptsMax,
      ttl: options.attemptsTtl,
    });
    this.listener = new AttemptsListener(
      store,
      (error, jid) =>
        this.logger.warn(
          `attempts log write for ${jid} failed (the job is filed; only its history misses this attempt): ${error instanceof Error ? error.message : String(error)}`,
        ),
      () => server.identity.identity,
    );
  }
}
