import { MAX_TTL_SECONDS } from '../job/time-bounds';
import { Allow, ValidateBy, ValidateNested } from './class-validator-parts';

/**
 * Jobs in flight at once, per process or capsule. Each slot is a processor
 * built at start: 1e9 of them never became ready (1.86 GB in 20 s, then a
 * fatal V8 error), and Sidekiq's own advice stays far below this.
 */
export const MAX_CONCURRENCY = 10_000;

/** A queue's weight in `queues: [[name, weight]]`: the fetch order repeats each name `weight` times. */
export const MAX_QUEUE_WEIGHT = 1_000;

/**
 * Every seconds option stays within what Redis takes as `EX`/`EXPIRE` (past about 9.2e15 it refuses the command): ten
 * years.
 */
export const MAX_SECONDS_OPTION = MAX_TTL_SECONDS;

/**
 * class-validator decorators for option classes, each with wurk's wording:
 * the message completes "wurk option <path> …" and quotes the value given,
 * so a start-up error says what is wrong without a look at the source.
 * An option left out (undefined) always passes: defaults are filled in later.
 */

/** Renders a bad value for a message; functions and instances by their kind, never their contents. */
export function shown(value: unknown): string {
  if (typeof value === 'function') return `a function ${value.name || '(anonymous)'}`;
  if (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.getPrototypeOf(value) !== Object.prototype
  ) {
    return `an instance of ${value.constructor?.name ?? 'an unknown class'}`;
  }
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * The building block: `test` decides, `reason` is the whole complaint
 * (`must be …`). `test` also sees the other options, for a rule between two.
 */
export function OptionRule(
  name: string,
  reason: (value: unknown) => string,
  test: (value: unknown, options: Record<string, unknown>) => boolean,
): PropertyDecorator {
  return ValidateBy({
    name,
    validator: {
      validate: (value: unknown, args) =>
        value === undefined || test(value, (args?.object ?? {}) as Record<string, unknown>),
      defaultMessage: (args) => reason(args?.value),
    },
  });
}

/** "must be <what> (got <value>)". */
function mustBe(
  name: string,
  what: string,
  test: (value: unknown, options: Record<string, unknown>) => boolean,
): PropertyDecorator {
  return OptionRule(name, (value) => `must be ${what} (got ${shown(value)})`, test);
}

export const IsOneOf = (allowed: readonly unknown[]): PropertyDecorator =>
  mustBe('isOneOf', `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`, (value) => allowed.includes(value));

export const IsFlag = (): PropertyDecorator => IsOneOf([true, false]);

export const IsText = ({ nonEmpty = false } = {}): PropertyDecorator =>
  mustBe(
    'isText',
    nonEmpty ? 'a non-empty string' : 'a string',
    (value) => typeof value === 'string' && (!nonEmpty || value.length > 0),
  );

/**
 * The longest wait a Node timer keeps: 2^31 - 1 ms, about 24.8 days. A
 * longer `setTimeout` prints a TimeoutOverflowWarning and fires after 1 ms,
 * so an interval option above it (a 30-day tick) would spin instead of wait.
 */
export const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/**
 * A number of seconds up to MAX_SECONDS_OPTION, or MAX_TIMER_SECONDS for an
 * option this process waits out with a timer (`timer`); `min` is exclusive
 * when 0 is not allowed (`> 0`), inclusive otherwise.
 */
export const IsSeconds = ({
  integer = false,
  positive = true,
  timer = false,
}: { integer?: boolean; positive?: boolean; timer?: boolean } = {}): PropertyDecorator => {
  const max = timer ? MAX_TIMER_SECONDS : MAX_SECONDS_OPTION;
  const bound = timer ? `${max} (24.8 days, the longest wait of a Node timer)` : `${max} (ten years)`;
  return mustBe(
    'isSeconds',
    `${integer ? 'an integer' : 'a number'} of seconds ${positive ? '> 0' : '>= 0'} and <= ${bound}`,
    (value) =>
      typeof value === 'number' &&
      Number.isFinite(value) &&
      (positive ? value > 0 : value >= 0) &&
      value <= max &&
      (!integer || Number.isInteger(value)),
  );
};

/** The words of a count rule: "an integer >= 1", or "an integer from 1 to 10000" with a ceiling. */
export function countRule(min: number, max?: number): string {
  return max === undefined ? `an integer >= ${min}` : `an integer from ${min} to ${max}`;
}

/** A whole count at least `min` (and at most `max` when given). */
export const IsCount = (min: number, max?: number): PropertyDecorator =>
  mustBe(
    'isCount',
    countRule(min, max),
    (value) => Number.isInteger(value) && (value as number) >= min && (max === undefined || (value as number) <= max),
  );

/** An array whose every element passes `element` (described as `of`). */
export const IsArrayOf = (of: string, element: (value: unknown) => boolean = () => true): PropertyDecorator =>
  mustBe('isArrayOf', `an array${of ? ` of ${of}` : ''}`, (value) => Array.isArray(value) && value.every(element));

/** A plain object or class instance (not null, not an array). */
export const IsObjectOption = (what: string): PropertyDecorator =>
  mustBe('isObjectOption', what, (value) => value !== null && typeof value === 'object' && !Array.isArray(value));

/** A known option whose inside is checked elsewhere (by its own resolver, with its own paths). */
export const IsResolvedElsewhere = (): PropertyDecorator => Allow();

/** Option classes whose nested objects are option classes too: owner → property → class. */
export const nestedOptionClasses = new WeakMap<object, Map<string, () => new () => object>>();

function registerNestedClass(target: object, property: string | symbol, type: () => new () => object): void {
  const owner = target.constructor;
  let map = nestedOptionClasses.get(owner);
  if (!map) nestedOptionClasses.set(owner, (map = new Map()));
  map.set(String(property), type);
}

/**
 * An object option with an option class of its own: its keys are checked
 * (unknown ones refused, with their full path `api.tokenz`) and its rules run.
 */
export function IsNestedOptions(type: () => new () => object, what: string): PropertyDecorator {
  return (target, property) => {
    registerNestedClass(target, property, type);
    IsObjectOption(what)(target, property);
    ValidateNested()(target, property);
  };
}

/**
 * An array option whose elements are option objects of one class (`capsules:
 * [{ name, queues }]`): each element's keys are checked like a nested
 * option's, with paths such as `capsules[1].concurrency`.
 */
export function IsNestedOptionsList(type: () => new () => object, what: string): PropertyDecorator {
  return (target, property) => {
    registerNestedClass(target, property, type);
    IsArrayOf(what, (element) => element !== null && typeof element === 'object' && !Array.isArray(element))(
      target,
      property,
    );
    ValidateNested({ each: true })(target, property);
  };
}

/** An option that must be given (inside a nested option object: `capsules[0].name`). */
export const IsRequiredOption = (what: string): PropertyDecorator =>
  ValidateBy({
    name: 'isRequiredOption',
    validator: { validate: (value: unknown) => value !== undefined, defaultMessage: () => `is required: ${what}` },
  });
