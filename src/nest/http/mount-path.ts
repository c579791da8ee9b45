import type { ApplicationConfig, ModulesContainer } from '@nestjs/core';

/**
 * The metadata key RouterModule sets on a module class (the constant moved
 * between Nest's entry points across versions; its value did not).
 */
const MODULE_PATH = '__module_path__';

function segments(path: string | undefined): string[] {
  return (path ?? '').split('/').filter((segment) => segment !== '');
}

/**
 * Where Nest serves a controller at `path` of `moduleClass`: the global
 * prefix, then the module's RouterModule path, then the controller path,
 * as Nest joins them. `''` when all three are empty.
 */
export function resolvedMountPath(
  config: ApplicationConfig,
  modules: ModulesContainer,
  moduleClass: Function,
  path: string,
): string {
  const modulePath =
    (Reflect.getMetadata(MODULE_PATH + modules.applicationId, moduleClass) as string | undefined) ??
    (Reflect.getMetadata(MODULE_PATH, moduleClass) as string | undefined);
  const parts = [...segments(config.getGlobalPrefix()), ...segments(modulePath), ...segments(path)];
  return parts.length === 0 ? '' : `/${parts.join('/')}`;
}
