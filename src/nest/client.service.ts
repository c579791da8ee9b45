import { Inject, Injectable } from '@nestjs/common';
import { Client } from '../client/client';
import type { PushTransport } from '../client/push-transport';
import { WURK_PUSH_TRANSPORT, WURK_RESOLVED_OPTIONS } from './tokens';
import { capsuleDefaultQueues, capsuleGroups } from '../server/capsules';
import { SERVER_DEFAULTS } from '../server/server-options';
import type { ResolvedWurkOptions } from './wurk-options';

/**
 * The injectable client: `performAsync(Worker, ...args)` (type-checked
 * against the worker's `perform`), `performIn`, `performAt`, `set(...)` for
 * per-call options, and `push` / `pushBulk` for raw Sidekiq hashes. Where
 * the jobs go is the WURK_PUSH_TRANSPORT token, which the testing module
 * replaces; the client itself is the same in tests and in production.
 */
@Injectable()
export class ClientService extends Client {
  constructor(@Inject(WURK_PUSH_TRANSPORT) transport: PushTransport, @Inject(WURK_RESOLVED_OPTIONS) options: ResolvedWurkOptions) {
    super(transport, { timestamps: options.timestamps, capsuleQueues: capsuleDefaultQueues(capsuleGroups(options.queues ?? SERVER_DEFAULTS.queues, options.concurrency, options.capsules)) });
  }
}
