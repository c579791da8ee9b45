import { Inject, Injectable } from '@nestjs/common';
import { WurkAdmin } from '../admin/wurk-admin';
import { RedisConnections } from '../redis/connections';
import { PeriodicService } from './periodic.service';
import { WURK_RESOLVED_OPTIONS } from './tokens';
import type { ResolvedWurkOptions } from './wurk-options';
import { WurkServer } from './wurk-server';

/**
 * The admin API as a provider: `stats`, `queues`, `scheduled`, `retries`,
 * `dead`, `processes`, `work` (and the periodic entries through `periodic`). A queue paused here
 * is known to this app's own server before `pause()` returns.
 */
@Injectable()
export class AdminService extends WurkAdmin {
  constructor(
    connections: RedisConnections,
    server: WurkServer,
    readonly periodic: PeriodicService,
    @Inject(WURK_RESOLVED_OPTIONS) options: ResolvedWurkOptions,
  ) {
    super(connections.command, {
      timestamps: options.timestamps,
      dead: { maxJobs: options.deadMaxJobs, timeout: options.deadTimeout },
      onPauseChange: (queue, paused) => server.notePaused(queue, paused),
    });
  }
}
