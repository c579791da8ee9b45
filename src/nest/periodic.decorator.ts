import type { PeriodicEntryOptions } from '../periodic/periodic-entry';

/** What `@Periodic` takes besides the cron: everything an entry has but the worker itself. */
export type PeriodicOptions = Omit<PeriodicEntryOptions, 'cron' | 'worker' | 'class'>;

const declarations = new WeakMap<object, Array<{ cron: string; options: PeriodicOptions }>>();

/**
 * Runs a `@Worker` on a cron schedule: `@Periodic('0 * * * *')`, or with
 * `{ args, queue, retry, unique: 'until_executed', tz, catchUp }`. Stack it
 * to run the same worker on several schedules or with different args.
 */
export function Periodic(cron: string, options: PeriodicOptions = {}): ClassDecorator {
  return (target) => {
    const list = declarations.get(target) ?? [];
    // Decorators apply bottom-up; unshift keeps the declarations in source order.
    list.unshift({ cron, options });
    declarations.set(target, list);
  };
}

export function periodicDeclarationsOf(target: object): ReadonlyArray<{ cron: string; options: PeriodicOptions }> {
  return declarations.get(target) ?? [];
}
