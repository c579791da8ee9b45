import { liftDeprecatedOptions } from './deprecated-options';
import type { WurkModuleOptions } from './module-options';
import { FLAT_OPTION_PATHS } from './flat-options';
import { getMetadataStorage } from './class-validator-parts';
import { nestedOptionClasses } from './option-rules';
import { validateOptions } from './validate-options';
import { WurkOptions } from './wurk-options';

/**
 * Names other job libraries give our options: a BullMQ `connection` is silently ignored otherwise. Only suggested,
 * never taken: their shapes differ from ours.
 */
const OPTION_ALIASES: Readonly<Record<string, string>> = {
  connection: 'redis',
  url: 'redis',
  host: 'redis',
  port: 'redis',
  workers: 'server.concurrency',
};

/**
 * What an unknown top-level key may have meant, by name: every option inside a group whose name no other group uses
 * (`newEntryGrace` → `periodic.newEntryGrace`), and every flat name of earlier versions (`concurency` is nearest
 * `concurrency` → `server.concurrency`).
 */
function groupedSuggestions(): Record<string, string> {
  const inner: Record<string, string[]> = {};
  for (const [group, type] of nestedOptionClasses.get(WurkOptions) ?? []) {
    const keys = getMetadataStorage().getTargetValidationMetadatas(type(), '', false, false);
    for (const key of new Set(keys.map((entry) => entry.propertyName))) (inner[key] ??= []).push(`${group}.${key}`);
  }
  const unique = Object.entries(inner).filter(([, paths]) => paths.length === 1);
  const flat = Object.entries(FLAT_OPTION_PATHS).map(([name, [group, key]]) => [name, `${group}.${key}`]);
  return Object.fromEntries([...unique.map(([key, [path]]) => [key, path]), ...flat]);
}

/** How the caller hears deprecations and adjusts the grouped options before they are checked. */
export interface CheckOptions {
  /** Hears one message per deprecated option given (the Nest layer logs it as a warning). */
  warn: (message: string) => void;
  /** Applied to the grouped options before the check (a process entry's overrides of `server`). */
  adjust?: (options: WurkOptions) => WurkOptions;
}

/**
 * The module options in their groups, checked: deprecated names lifted into their groups (each warned about once,
 * old and new together refused), then every key and rule checked, the first problem thrown as WurkConfigError naming
 * its full path (`server.concurrency`). The compound options (queues, capsules, periodic entries, api) are checked
 * by their own resolvers above this layer.
 */
export function checkWurkOptions(options: WurkModuleOptions | undefined, { warn, adjust }: CheckOptions): WurkOptions {
  const lifted = liftDeprecatedOptions(options ?? {}, warn);
  // A non-object is left for validateOptions to refuse as it was given.
  const isObject = lifted !== null && typeof lifted === 'object' && !Array.isArray(lifted);
  const grouped = adjust && isObject ? adjust(lifted) : lifted;
  validateOptions(grouped, {
    type: WurkOptions,
    owner: 'WurkModule.forRoot',
    aliases: OPTION_ALIASES,
    suggestions: groupedSuggestions(),
  });
  return grouped;
}
