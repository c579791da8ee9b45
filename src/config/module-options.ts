import type { DeprecatedWurkOptions } from './deprecated-options';
import type { WurkOptions } from './wurk-options';

/**
 * `WurkModule.forRoot()` options as an app may give them (and a `forRootAsync` factory return them): the groups of
 * WurkOptions, and for one minor version the deprecated flat names of DeprecatedWurkOptions.
 */
export type WurkModuleOptions = WurkOptions & DeprecatedWurkOptions;
