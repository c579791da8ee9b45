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

/**
 * The error of class `type` that the promise `run` returns rejects with; a throw or any other outcome fails the test.
 */
export async function rejectedBy<E extends Error>(
  type: abstract new (...args: never[]) => E,
  run: () => Promise<unknown>,
): Promise<E> {
  const outcome = await run().then(
    () => new Error(`expected a rejection with a ${type.name}`),
    (error: unknown) => error,
  );
  if (outcome instanceof type) return outcome;
  throw outcome;
}

/** The WurkConfigError `run` throws; any other outcome fails the test. */
export function configError(run: () => unknown): WurkConfigError {
  return thrownBy(WurkConfigError, run);
}
