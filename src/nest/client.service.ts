import { Inject, Injectable } from '@nestjs/common';
import { Client } from '../client/client';
import { RedisConnections } from '../redis/connections';
import { WURK_RESOLVED_OPTIONS } from './tokens';
import type { ResolvedWurkOptions } from './wurk-options';

/**
 * The injectable client: `performAsync(Worker, ...args)` (type-checked
 * against the worker's `perform`), `performIn`, `performAt`, `set(...)` for
 * per-call options, and `push` / `pushBulk` for raw Sidekiq hashes.
 */
@Injectable()
export class ClientService extends Client {
  constructor(connections: RedisConnections, @Inject(WURK_RESOLVED_OPTIONS) options: ResolvedWurkOptions) {
    super(connections.command, { timestamps: options.timestamps });
  }
}
