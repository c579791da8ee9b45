import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { WurkConfigError } from '../job/errors';
import {
  declaredWorkerClasses,
  validateWorkerOptions,
  WorkerClass,
  WorkerInstance,
  workerName,
  workerOptionsOf,
} from '../job/worker-definition';
import { WorkerRegistry } from '../job/worker-registry';
import { CapsuleGroup, capsuleGroups, checkWorkerCapsule } from '../server/capsules';
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
export class WorkerExplorer implements OnModuleInit {
  private readonly logger = new Logger('Wurk');
  private groups: CapsuleGroup[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly registry: WorkerRegistry,
    @Inject(WURK_RESOLVED_OPTIONS) private readonly options: ResolvedWurkOptions,
  ) {}

  onModuleInit(): void {
    this.groups = capsuleGroups(
      this.options.queues ?? SERVER_DEFAULTS.queues,
      this.options.concurrency,
      this.options.capsules,
    );
    for (const { wrapper, target } of providerClasses(this.discovery)) {
      if (workerOptionsOf(target)) this.register(wrapper, target);
    }
    this.logger.log(
      `registered ${this.registry.all().length} worker(s): ${
        this.registry
          .all()
          .map((w) => w.name)
          .join(', ') || 'none'
      }`,
    );
    if (this.options.processing) this.warnUnprovided();
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
    this.registry.register({ name, target, options, instance: wrapper.instance as WorkerInstance });
  }
}
