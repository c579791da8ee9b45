import { Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';

/** Resolves a middleware entry: a class becomes its provider instance (or a new one built with DI). */
export async function resolveEntry<T>(moduleRef: ModuleRef, entry: T | Type<T>): Promise<T> {
  if (typeof entry !== 'function' || !/^class[\s{]/.test(Function.prototype.toString.call(entry))) return entry as T;
  const type = entry as Type<T>;
  try {
    return moduleRef.get(type, { strict: false });
  } catch {
    return moduleRef.create(type);
  }
}
