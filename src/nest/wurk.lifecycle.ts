import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  OnModuleDestroy,
  OnModuleInit,
  Type,
} from '@nestjs/common';
import type { JobLifecycleListener } from '../server/server-middleware';
import { ModuleRef } from '@nestjs/core';
import { RedisConnections } from '../redis/connections';
import { ReliablePushTransport } from '../client/reliable-push/reliable-push-transport';
import type { WorkerOptions } from '../job/job-hash';
import { WorkerRegistry } from '../job/worker-registry';
import type { QueueUser } from '../server/queue-plan';
import { PeriodicService } from './periodic.service';
import { ClientService } from './client.service';
import { resolveEntry } from './resolve-entry';
import { WURK_RESOLVED_OPTIONS } from './tokens';
import type { ResolvedWurkOptions } from './wurk-options';
import { PeriodicLifecycle } from './periodic.lifecycle';
import { StatusHooks } from './status.hooks';
import { AttemptsHooks } from './attempts.hooks';
import { UniqueHooks } from './unique.hooks';
import { installEncryption } from './encryption.hooks';
import { CollapseHooks } from './collapse.hooks';
import { WurkServer } from './wurk-server';

/**
 * Starts and stops wurk with the application. Connections close last, in
 * `onApplicationShutdown`, so jobs still draining can push follow-up jobs.
 */
@Injectable()
export class WurkLifecycle
  implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown, OnApplicationShutdown
{
  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly connections: RedisConnections,
    private readonly client: ClientService,
    private readonly server: WurkServer,
    @Inject(WURK_RESOLVED_OPTIONS) private readonly options: ResolvedWurkOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    // A test may override ClientService with a plain mock; it has no chain to install into.
    const installable = typeof (this.client as Partial<ClientService>).use === 'function';
    for (const entry of installable ? this.options.clientMiddleware : []) {
      this.client.use(await resolveEntry(this.moduleRef, entry));
    }
    for (const entry of this.options.serverMiddleware) {
      this.server.use(await resolveEntry(this.moduleRef, entry));
    }
    // After the app's own on both planes; on the client before the unique lock, which refuses an encrypted job.
    if (installable) installEncryption({ client: this.client, server: this.server }, this.options.encryption);
    // Innermost: the unique digest is taken of the job as the app's middleware left it.
    if (installable) this.optionalProvider(UniqueHooks)?.installClientMiddleware();
    // Innermost too: a debounced job is written by it, as the rest of the chain left it.
    if (installable) this.optionalProvider(CollapseHooks)?.installClientMiddleware();
    // Status rows first (its onStart installs the progress reporter), then
    // periodic running locks and unique locks, then the attempts log; addListener ignores a listener added twice.
    for (const holder of [StatusHooks, PeriodicLifecycle, UniqueHooks, AttemptsHooks] as Type<{
      listener?: JobLifecycleListener;
    }>[]) {
      const listener = this.optionalProvider(holder)?.listener;
      if (listener) this.server.addListener(listener);
    }
  }

  /** Processing starts once every module is initialised, so workers and hooks are all in place. */
  async onApplicationBootstrap(): Promise<void> {
    this.server.planQueues(this.queueUsers());
    await this.server.manager?.start();
  }

  /** The first hook of app.close(): readiness turns false before the drain begins, while HTTP still answers. */
  onModuleDestroy(): void {
    this.server.markClosing();
  }

  /** Drain first, while the connections are still open for jobs that push during the drain. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.server.manager?.stop();
  }

  /**
   * Each registered worker and periodic entry with the queue its jobs go to (as ClientService and the ticker push
   * them).
   */
  private queueUsers(): QueueUser[] {
    const periodic = this.optionalProvider(PeriodicService);
    const capsuleQueues = periodic?.capsuleQueues ?? {};
    const registry = this.optionalProvider(WorkerRegistry);
    const workerQueue = (options: WorkerOptions | undefined) =>
      options?.queue ?? (options?.capsule !== undefined ? capsuleQueues[options.capsule] : undefined);
    const workers = (registry?.appWorkers() ?? []).map((worker) => ({
      who: `@Worker(${worker.name})`,
      queue: workerQueue(worker.options) ?? 'default',
    }));
    const entries = (periodic?.entries() ?? []).map((entry) => ({
      who: entry.source,
      queue: entry.queue ?? workerQueue(registry?.get(entry.className)?.options) ?? 'default',
    }));
    // A @Periodic entry on its worker's own queue would repeat the worker's warning.
    const repeats = (user: QueueUser, index: number) =>
      workers.some(
        (worker) => worker.queue === user.queue && periodic?.entries()[index].className === worker.who.slice(8, -1),
      );
    return [...workers, ...entries.filter((entry, index) => !repeats(entry, index))];
  }

  private optionalProvider<T>(type: Type<T>): T | undefined {
    try {
      return this.moduleRef.get(type, { strict: false });
    } catch {
      return undefined;
    }
  }

  /**
   * Reliable push's buffer gets the shutdown timeout to reach Redis before the connections close; what is left is
   * dropped and counted in one line, or with `client.reliablePushDirectory` left in the journal for the next start.
   */
  async onApplicationShutdown(): Promise<void> {
    const transport = this.client.transport;
    if (transport instanceof ReliablePushTransport) await transport.close(this.options.shutdownTimeout * 1000);
    await this.connections.close();
  }
}
