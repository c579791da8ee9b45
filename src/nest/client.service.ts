import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { WorkerRegistry } from '../job/worker-registry';
import { Client } from '../client/client';
import type { PushTransport } from '../client/push-transport';
import { WURK_PUSH_TRANSPORT, WURK_RESOLVED_OPTIONS } from './tokens';
import { capsuleDefaultQueues, capsuleGroups } from '../server/capsules';
import { SERVER_DEFAULTS } from '../server/server-options';
import type { ResolvedWurkOptions } from './wurk-options';

/**
 * The injectable client: `performAsync(Worker, ...args)` (type-checked
 * against the worker's `perform`), `performIn`, `performAt`, `set(...)` for
 * per-call options, and `push` / `pushBulk` for raw Sidekiq hashes (a
 * class this app registered takes its worker's `queue` and `retry`). Where
 * the jobs go is the WURK_PUSH_TRANSPORT token, which the testing module
 * replaces; the client itself is the same in tests and in production.
 */
@Injectable()
export class ClientService extends Client {
  constructor(
    @Inject(WURK_PUSH_TRANSPORT) transport: PushTransport,
    @Inject(WURK_RESOLVED_OPTIONS) options: ResolvedWurkOptions,
    @Optional() registry?: WorkerRegistry,
  ) {
    const logger = new Logger('WurkClient');
    super(transport, {
      timestamps: options.timestamps,
      capsuleQueues: capsuleDefaultQueues(
        capsuleGroups(options.queues ?? SERVER_DEFAULTS.queues, options.concurrency, options.capsules),
      ),
      // Read at push time: the registry fills at module init, after this client is built.
      registeredWorker: (className) => registry?.get(className)?.options,
      warn: (message) => logger.warn(message),
    });
  }
}
