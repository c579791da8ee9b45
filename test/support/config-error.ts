import { WurkConfigError } from '../../src/job/errors';

/** The WurkConfigError `run` throws; any other outcome fails the test. */
export function configError(run: () => unknown): WurkConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof WurkConfigError) return error;
    throw error;
  }
  throw new Error('expected a WurkConfigError');
}
