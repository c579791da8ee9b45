import type { DiscoveryService } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import type { WorkerClass } from '../job/worker-definition';

/**
 * Every class provider of the app, once each with its first wrapper: a class
 * listed in several modules must be registered once, not once per module.
 */
export function providerClasses(discovery: DiscoveryService): Array<{ wrapper: InstanceWrapper; target: WorkerClass }> {
  const seen = new Set<unknown>();
  const classes: Array<{ wrapper: InstanceWrapper; target: WorkerClass }> = [];
  for (const wrapper of discovery.getProviders()) {
    const target = wrapper.metatype as WorkerClass | undefined;
    if (!target || typeof target !== 'function' || seen.has(target)) continue;
    seen.add(target);
    classes.push({ wrapper, target });
  }
  return classes;
}
