import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { WurkConfigError } from '../job/errors';
import { validateWorkerOptions, WorkerClass, WorkerInstance, workerName, workerOptionsOf } from '../job/worker-definition';
import { WorkerRegistry } from '../job/worker-registry';
import { providerClasses } from './provider-classes';

/**
 * Finds every provider decorated with `@Worker` and registers it by its
 * Sidekiq class string. Runs at module init so a bad worker (a duplicate
 * name, no `perform`, a bad option) stops the app before it serves.
 */
@Injectable()
export class WorkerExplorer implements OnModuleInit {
  private readonly logger = new Logger('Wurk');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly registry: WorkerRegistry,
  ) {}

  onModuleInit(): void {
    for (const { wrapper, target } of providerClasses(this.discovery)) {
      if (workerOptionsOf(target)) this.register(wrapper, target);
    }
    this.logger.log(`registered ${this.registry.all().length} worker(s): ${this.registry.all().map((w) => w.name).join(', ') || 'none'}`);
  }

  private register(wrapper: InstanceWrapper, target: WorkerClass): void {
    const name = workerName(target);
    const options = workerOptionsOf(target) ?? {};
    validateWorkerOptions(name, options);
    if (!wrapper.isDependencyTreeStatic()) {
      throw new WurkConfigError(`@Worker(${name})`, `${target.name} must be a singleton provider (request-scoped workers are not supported)`);
    }
    this.registry.register({ name, target, options, instance: wrapper.instance as WorkerInstance });
  }
}
