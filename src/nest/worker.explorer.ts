import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { WurkConfigError } from '../job/errors';
import {
  declaredWorkerClasses,
  validateWorkerOptions,
  WorkerClass,
  WorkerInstance,
  workerName,
  workerFileOf,
  workerOptionsOf,
} from '../job/worker-definition';
import { WorkerRegistry } from '../job/worker-registry';
import { checkIterableWorker, isIterableWorker, RedisIterationRunner } from '../iterable/iteration-runner';
import { RedisConnections } from '../redis/connections';
import { CapsuleGroup, capsuleGroups, checkWorkerCapsule, DEFAULT_CAPSULE } from '../server/capsules';
import { SandboxPool } from '../server/sandbox/sandbox-pool';
import { sandboxPoolSpec } from '../server/sandbox/sandbox-spec';
import { SERVER_DEFAULTS } from '../server/server-options';
import { providerClasses } from './provider-classes';
import { WURK_RESOLVED_OPTIONS } from './tokens';
import type { ResolvedWurkOptions } from './wurk-options';

/**
 * Finds every provider decorated with `@Worker` and registers it by its
 * Sidekiq class string. Runs at module init so a bad worker (a duplicate
 * name, no `perform`, a bad option) stops the app before it serves.
 */
@Injectable()
export class WorkerExplorer implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Wurk');
  private readonly iterationLogger = new Logger('WurkIterable');
  private groups: CapsuleGroup[] = [];
  /** The thread pools of sandboxed workers, closed after the server has stopped (beforeApplicationShutdown). */
  private readonly pools: SandboxPool[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly registry: WorkerRegistry,
    @Inject(WURK_RESOLVED_OPTIONS) private readonly options: ResolvedWurkOptions,
    private readonly connections: RedisConnections,
  ) {}

  async onModuleInit(): Promise<void> {
    this.groups = capsuleGroups(
      this.options.queues ?? SERVER_DEFAULTS.queues,
      this.options.concurrency,
      this.options.capsules,
    );
    for (const { wrapper, target } of providerClasses(this.discovery)) {
      if (workerOptionsOf(target)) this.register(wrapper, target);
    }
    this.logger.log(
      `registered ${this.registry.appWorkers().length} worker(s): ${
        this.registry
          .appWorkers()
          .map((w) => w.name)
          .join(', ') || 'none'
      }`,
    );
    if (this.options.processing) this.warnUnprovided();
    await this.startPools();
  }

  /** Terminates every sandbox thread, idle or not: none may outlive the app (or keep its process alive). */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.pools.splice(0).map((pool) => pool.close()));
  }

  /**
   * Loads each sandboxed class in a thread before the app serves: a file
   * the thread cannot import (no TypeScript loader, side effects that throw,
   * the class not exported) stops start-up naming the class and the reason,
   * instead of failing every job of it later.
   */
  private async startPools(): Promise<void> {
    const results = await Promise.allSettled(this.pools.map((pool) => pool.start()));
    const failed = results.findIndex((result) => result.status === 'rejected');
    if (failed === -1) return;
    const { spec } = this.pools[failed];
    const reason = (results[failed] as PromiseRejectedResult).reason as unknown;
    await this.onApplicationShutdown();
    throw new WurkConfigError(
      `@Worker(${spec.workerName}).sandbox`,
      `cannot load ${spec.exportName} in a worker thread from ${spec.file}: ${reason instanceof Error ? reason.message : String(reason)}${
        spec.file.endsWith('.ts')
          ? ' (a .ts file needs a TypeScript loader the thread inherits: node -r ts-node/register)'
          : ''
      }`,
    );
  }

  /**
   * A decorated class that no module provides is the usual reason a job
   * fails with "no @Worker named …": said once at start-up, where the fix
   * is. Only in a processing app: a producer imports worker classes just to
   * enqueue them.
   */
  private warnUnprovided(): void {
    const provided = new Set(this.registry.all().map((worker) => worker.target));
    const missing = declaredWorkerClasses().filter((target) => !provided.has(target));
    if (missing.length === 0) return;
    const names = missing.map((target) =>
      workerName(target) === target.name ? target.name : `${target.name} (${workerName(target)})`,
    );
    this.logger.warn(
      `@Worker class(es) provided by no module: ${names.join(', ')}; jobs of theirs fetched by this process will fail until the class is added to a module's providers`,
    );
  }

  private register(wrapper: InstanceWrapper, target: WorkerClass): void {
    const name = workerName(target);
    const options = workerOptionsOf(target) ?? {};
    validateWorkerOptions(name, options);
    checkWorkerCapsule(name, options.capsule, options.queue, this.groups);
    if (!wrapper.isDependencyTreeStatic()) {
      throw new WurkConfigError(
        `@Worker(${name})`,
        `${target.name} must be a singleton provider (request-scoped workers are not supported)`,
      );
    }
    // A producer-only app never performs, so it starts no threads.
    const spec = this.options.processing
      ? sandboxPoolSpec({
          name,
          target,
          options,
          declaredIn: workerFileOf(target),
          defaultSize: this.poolSize(options),
        })
      : undefined;
    const instance = wrapper.instance as WorkerInstance;
    const iterable = isIterableWorker(instance);
    if (iterable) checkIterableWorker(name, instance);
    if (iterable && spec)
      throw new WurkConfigError(
        `@Worker(${name}).sandbox`,
        'is not supported for an IterableWorker: its loop saves the cursor from this process',
      );
    const sandbox = spec ? new SandboxPool(spec) : undefined;
    if (sandbox) this.pools.push(sandbox);
    // Only a processing app runs jobs; elsewhere (a producer, the testing module) `perform` iterates in memory.
    const iteration =
      iterable && this.options.processing
        ? new RedisIterationRunner(instance, name, this.connections.command, this.iterationLogger)
        : undefined;
    this.registry.register({ name, target, options, instance, sandbox, iteration });
  }

  /** One thread per processor of the class's capsule: a sandboxed job never waits for a thread while a slot is free. */
  private poolSize(options: { capsule?: string }): number {
    const group = this.groups.find((candidate) => candidate.name === (options.capsule ?? DEFAULT_CAPSULE));
    return group?.concurrency ?? SERVER_DEFAULTS.concurrency;
  }
}
