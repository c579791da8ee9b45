/**
 * A module loaded afresh before each test of the enclosing block (`load` calls `require`). What a module
 * builds at import (name tables, TTL constants, bucket limits, a console logger) then runs inside the test,
 * so Stryker, which runs a mutant's covering tests only, counts it as covered by the tests that pin it
 * instead of by none (an import at the top of a test file runs outside every test).
 */
export function freshEachTest<T>(load: () => T): { readonly module: T } {
  const holder = {} as { module: T };
  beforeEach(() => {
    jest.isolateModules(() => {
      holder.module = load();
    });
  });
  return holder;
}
