import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { WurkConfigError } from '../job/errors';
import { workerName, workerOptionsOf } from '../job/worker-definition';
import { resolvePeriodicEntry } from '../periodic/periodic-entry';
import { periodicDeclarationsOf } from './periodic.decorator';
import { PeriodicService } from './periodic.service';
import { providerClasses } from './provider-classes';

/**
 * Finds `@Periodic` workers and adds their entries. At module init, so an
 * invalid cron stops the app before it serves, naming the worker.
 */
@Injectable()
export class PeriodicExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly periodic: PeriodicService,
  ) {}

  onModuleInit(): void {
    for (const { target } of providerClasses(this.discovery)) {
      const declarations = periodicDeclarationsOf(target);
      if (declarations.length === 0) continue;
      if (!workerOptionsOf(target))
        throw new WurkConfigError(`@Periodic(${target.name})`, 'must decorate a @Worker class');
      declarations.forEach(({ cron, options }, index) => {
        const source =
          declarations.length > 1 ? `@Periodic(${workerName(target)})[${index}]` : `@Periodic(${workerName(target)})`;
        const entry = resolvePeriodicEntry({ ...options, cron, worker: target }, source, this.periodic.capsuleQueues);
        try {
          this.periodic.add(entry);
        } catch (error) {
          throw new WurkConfigError(source, (error as Error).message);
        }
      });
    }
  }
}
