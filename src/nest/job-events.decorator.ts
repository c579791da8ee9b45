import type { JobEventName } from '../server/job-events';

const handlers = new WeakMap<object, Array<{ method: string | symbol; events: JobEventName[] }>>();

/**
 * Marks a provider method as a handler of this process's job lifecycle
 * events: `@OnJobEvent('completed')` or `@OnJobEvent(['failed', 'dead'])`.
 * The method receives a JobEvent after the job's fate is written; what it
 * returns or throws changes nothing (errors are logged).
 */
export function OnJobEvent(events: JobEventName | JobEventName[]): MethodDecorator {
  return (prototype, method) => {
    const list = handlers.get(prototype) ?? [];
    list.push({ method, events: Array.isArray(events) ? events : [events] });
    handlers.set(prototype, list);
  };
}

/** The decorated methods of a class, own and inherited. */
export function jobEventHandlersOf(target: {
  prototype: object;
}): Array<{ method: string | symbol; events: JobEventName[] }> {
  const found: Array<{ method: string | symbol; events: JobEventName[] }> = [];
  for (
    let prototype: object | null = target.prototype;
    prototype && prototype !== Object.prototype;
    prototype = Object.getPrototypeOf(prototype)
  ) {
    found.push(...(handlers.get(prototype) ?? []));
  }
  return found;
}
