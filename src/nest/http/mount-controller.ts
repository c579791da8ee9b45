import { Controller, Type, VERSION_NEUTRAL } from '@nestjs/common';

/**
 * A subclass of `base` served at `path`: one per registration, because
 * setting path metadata on the shared class would move every mount. Version
 * neutral, so an app's URI versioning does not put a second version in
 * front of the contract's own `/v1`.
 */
export function mountController<T>(base: Type<T>, path: string): Type<T> {
  const mounted = class extends (base as Type<object>) {};
  Object.defineProperty(mounted, 'name', { value: base.name });
  Controller({ path, version: VERSION_NEUTRAL })(mounted);
  return mounted as Type<T>;
}
