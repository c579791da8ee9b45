import { WurkConfigError } from '../../src/job/errors';

/** The error of class `type` that `run` throws; any other outcome fails the test. */
export function thrownBy<E extends Error>(type: abstract new (...args: never[]) => E, run: () => unknown): E {
  try {
    run();
  } catch (error) {
    if (error instanceof type) return error;
    throw error;
  }
  throw new Error(`expected a ${type.name}`);
}

/** The WurkConfigError `run` throws; any other outcome fails the test. */
export function configError(run: () => unknown): WurkConfigError {
  return thrownBy(WurkConfigError, run);
}
