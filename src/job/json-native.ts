import { InvalidJobError } from './errors';

/**
 * Ruby's JSON parser refuses documents nested deeper than this
 * (`max_nesting`), so a job that deep would be pushed fine and then fail to
 * parse on every Sidekiq server. The count includes the payload object and
 * the `args` array around the arguments.
 */
export const MAX_NESTING = 100;

function describe(value: unknown): string | undefined {
  switch (typeof value) {
    case 'undefined':
      return 'undefined';
    case 'function':
      return 'a function';
    case 'bigint':
      return 'a BigInt';
    case 'symbol':
      return 'a Symbol';
    case 'number':
      return Number.isFinite(value) ? undefined : String(value);
    default:
      break;
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (value instanceof Date) return 'a Date';
  if (value instanceof Map) return 'a Map';
  if (value instanceof Set) return 'a Set';
  if (Array.isArray(value)) return undefined;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    // An anonymous class has the name '', which would read "an instance of ".
    return `an instance of ${(value as object).constructor?.name || 'a class'}`;
  }
  return undefined;
}

function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/**
 * Refuses anything that would not survive `JSON.stringify` → Ruby `JSON.parse`
 * unchanged, naming the path of the first offender (`args[1].when is a Date`).
 * `depth` is the nesting level of `value` itself within the whole payload.
 */
export function assertJsonNative(value: unknown, path: string, depth: number, seen?: Set<object>): void {
  const bad = describe(value);
  if (bad) throw new InvalidJobError(path, `is ${bad}; job arguments must be plain JSON`);
  if (value === null || typeof value !== 'object') return;
  if (depth > MAX_NESTING) {
    throw new InvalidJobError(path, `nests deeper than ${MAX_NESTING} levels, which Ruby's JSON parser refuses`);
  }
  // Made for the first container only: most members are scalars, checked without it.
  const ancestors = seen ?? new Set<object>();
  if (ancestors.has(value)) throw new InvalidJobError(path, 'is a circular reference');
  ancestors.add(value);
  if (Array.isArray(value)) {
    value.forEach((item, index) => assertJsonNative(item, childPath(path, index), depth + 1, ancestors));
  } else {
    for (const key of Object.keys(value)) {
      assertJsonNative((value as Record<string, unknown>)[key], childPath(path, key), depth + 1, ancestors);
    }
  }
  ancestors.delete(value);
}
