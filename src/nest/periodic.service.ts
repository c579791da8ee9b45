import { Inject, Injectable, Logger } from '@nestjs/common';
import { resolvePeriodicEntries } from '../periodic/periodic-entry';
import { PeriodicManager } from '../periodic/periodic-manager';
import { RedisConnections } from '../redis/connections';
import { capsuleDefaultQueues, capsuleGroups } from '../server/capsules';
import { SERVER_DEFAULTS } from '../server/server-options';
import { ClientService } from './client.service';
import { WURK_RESOLVED_OPTIONS } from './tokens';
import type { ResolvedWurkOptions } from './wurk-options';

/**
 * The injectable periodic jobs: `list()`, `disable(entry)`, `enable(entry)`
 * (an entry is a pjid, a class string, or an item of `list()`). Disabling
 * is stored in Redis, so it holds in every process and across restarts.
 */
@Injectable()
export class PeriodicService extends PeriodicManager {
  /** Capsule name → its first queue, where a worker naming the capsule and no queue is pushed. */
  readonly capsuleQueues: Readonly<Record<string, string>>;

  constructor(
    connections: RedisConnections,
    client: ClientService,
    @Inject(WURK_RESOLVED_OPTIONS) options: ResolvedWurkOptions,
  ) {
    const capsuleQueues = capsuleDefaultQueues(
      capsuleGroups(options.queues ?? SERVER_DEFAULTS.queues, options.concurrency, options.capsules),
    );
    const entries = resolvePeriodicEntries(
      options.periodic.map((input, index) => ({ input, source: `periodic.entries[${index}]` })),
      capsuleQueues,
    );
    // Through the client, so client middleware (status, uniqueness, the app's own) sees periodic pushes too.
    super(connections.command, (payload) => client.push(payload), entries, {
      tickInterval: options.tickInterval,
      newEntryGrace: options.periodicNewEntryGrace,
      logger: new Logger('WurkPeriodic'),
    });
    this.capsuleQueues = capsuleQueues;
  }
}
