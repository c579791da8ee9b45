import { getMetadataStorage, ValidationError, validateSync } from './class-validator-parts';
import { didYouMean } from '../job/did-you-mean';
import { WurkConfigError } from '../job/errors';
import { nestedOptionClasses, shown } from './option-rules';

export interface OptionsShape {
  /** The option class: every known key is a decorated property. */
  type: new () => object;
  /** Prefix of every path (`api` for `api.mount`); empty at the top. */
  path?: string;
  /** Where the options come from, for an unknown key's message (`WurkModule.forRoot`). */
  owner: string;
  /** Names other libraries use for our options (BullMQ's `connection` → `redis`). */
  aliases?: Readonly<Record<string, string>>;
  /**
   * More names an unknown top-level key may be a misspelling of, each with the path to suggest: the flat names of
   * earlier versions and the options inside groups (`concurency` → `server.concurrency`).
   */
  suggestions?: Readonly<Record<string, string>>;
}

/**
 * Checks `options` against an option class with class-validator: every key
 * must be known (a typo, or another library's name, stops start-up with a
 * did-you-mean) and every rule must hold. Throws WurkConfigError naming the
 * first bad option by its full path (`api.tokenz`, `concurrency`).
 */
export function validateOptions(options: unknown, shape: OptionsShape): void {
  const prefix = shape.path ? `${shape.path}.` : '';
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new WurkConfigError(shape.path || 'options', `must be an object (got ${shown(options)})`);
  }
  const errors = validateSync(asInstance(shape.type, options), {
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: false,
  });
  const first = firstProblem(errors, []);
  if (!first) return;
  const { path, error, constraint, message } = first;
  const where = `${prefix}${formatPath(path)}`;
  if (constraint === 'whitelistValidation') {
    const known = knownKeys(error.target?.constructor as (new () => object) | undefined);
    const topLevel = path.length === 1;
    const suggestions = topLevel ? (shape.suggestions ?? {}) : {};
    const meant = didYouMean(
      String(error.property),
      [...known, ...Object.keys(suggestions)],
      topLevel ? shape.aliases : {},
    );
    const hint =
      meant === undefined ? '' : `; did you mean ${Object.hasOwn(suggestions, meant) ? suggestions[meant] : meant}?`;
    throw new WurkConfigError(where, `is not an option of ${shape.owner}${hint}`);
  }
  throw new WurkConfigError(where, message);
}

/**
 * The options as an instance of their class, nested option objects too, so
 * class-validator finds the rules (it reads them off the constructor). The
 * caller's objects are never changed.
 */
function asInstance(type: new () => object, value: object): object {
  const instance = Object.assign(Object.create(type.prototype) as object, value);
  const nested = nestedOptionClasses.get(type);
  for (const [property, nestedType] of nested ?? []) {
    const inner = (value as Record<string, unknown>)[property];
    if (Array.isArray(inner)) {
      (instance as Record<string, unknown>)[property] = inner.map((element) =>
        isOptionObject(element) ? asInstance(nestedType(), element) : element,
      );
    } else if (isOptionObject(inner)) {
      (instance as Record<string, unknown>)[property] = asInstance(nestedType(), inner);
    }
  }
  return instance;
}

function isOptionObject(value: unknown): value is object {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function knownKeys(type: (new () => object) | undefined): string[] {
  if (!type) return [];
  const metadata = getMetadataStorage().getTargetValidationMetadatas(type, '', false, false);
  return [...new Set(metadata.map((entry) => entry.propertyName))];
}

interface Problem {
  path: string[];
  error: ValidationError;
  constraint: string;
  message: string;
}

/** Depth first, in declaration order; an unknown key is reported before the rules of known ones. */
function firstProblem(errors: ValidationError[], parent: string[]): Problem | undefined {
  const ordered = [...errors].sort((a, b) => unknownFirst(a) - unknownFirst(b));
  for (const error of ordered) {
    const path = [...parent, String(error.property)];
    const [constraint, message] = Object.entries(error.constraints ?? {})[0] ?? [];
    if (constraint !== undefined && message !== undefined) return { path, error, constraint, message };
    const inner = firstProblem(error.children ?? [], path);
    if (inner) return inner;
  }
  return undefined;
}

function unknownFirst(error: ValidationError): number {
  return error.constraints && 'whitelistValidation' in error.constraints ? 0 : 1;
}

/** `['periodic', '0', 'cron']` → `periodic[0].cron`. */
function formatPath(path: string[]): string {
  return path.reduce((text, part) => (/^\d+$/.test(part) ? `${text}[${part}]` : text ? `${text}.${part}` : part), '');
}
