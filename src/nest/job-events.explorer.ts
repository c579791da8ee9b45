import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { WurkConfigError } from '../job/errors';
import { JOB_EVENTS, JobEventDispatcher } from '../server/job-events';
import { jobEventHandlersOf } from './job-events.decorator';
import { providerClasses } from './provider-classes';
import { WurkServer } from './wurk-server';

/**
 * Finds `@OnJobEvent` methods and subscribes them. With none in the app no
 * listener is added at all, so processing pays nothing for the feature.
 */
@Injectable()
export class JobEventsExplorer implements OnModuleInit {
  readonly dispatcher = new JobEventDispatcher(new Logger('WurkEvents'));

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly server: WurkServer,
  ) {}

  onModuleInit(): void {
    for (const { wrapper, target } of providerClasses(this.discovery)) {
      const declared = jobEventHandlersOf(target);
      if (declared.length === 0) continue;
      const instance = wrapper.instance as Record<string | symbol, unknown> | undefined;
      if (!instance || !wrapper.isDependencyTreeStatic() || wrapper.isTransient) {
        throw new WurkConfigError(
          `@OnJobEvent(${target.name})`,
          'must decorate a singleton provider (not request- or transient-scoped)',
        );
      }
      for (const { method, events } of declared) {
        for (const event of events) {
          if (!(JOB_EVENTS as readonly string[]).includes(event))
            throw new WurkConfigError(
              `@OnJobEvent(${target.name}.${String(method)})`,
              `names an unknown event "${event}" (one of ${JOB_EVENTS.join(', ')})`,
            );
          this.dispatcher.on(event, (payload) => (instance[method] as (e: unknown) => unknown).call(instance, payload));
        }
      }
    }
    if (this.dispatcher.size > 0) this.server.addListener(this.dispatcher);
  }
}
