import { ApiProblem } from '../../src/api/problem';

/** What a refusal says: every field a client sees, for exact comparison. */
export interface ProblemFields {
  type: string;
  status: number;
  detail: string;
  extensions: Record<string, unknown>;
  headers: Record<string, string>;
}

/**
 * An ApiProblem of this module registry, or of one a test loaded afresh
 * (`freshEachTest`), whose class is another copy of the same code.
 */
function fieldsOf(error: unknown): ProblemFields {
  if (!(error instanceof ApiProblem))
    expect([error instanceof Error, (error as Error).name]).toEqual([true, 'ApiProblem']);
  const { type, status, detail, extensions, headers } = error as ApiProblem;
  return { type, status, detail, extensions, headers };
}

/** The ApiProblem `run` throws; fails the test when it throws anything else or nothing. */
export function problemOf(run: () => unknown): ProblemFields {
  try {
    run();
  } catch (error) {
    return fieldsOf(error);
  }
  throw new Error('accepted, not refused');
}

/** The ApiProblem `pending` rejects with; fails the test when it rejects with anything else or resolves. */
export async function rejectionProblem(pending: Promise<unknown>): Promise<ProblemFields> {
  const outcome = await pending.then(
    () => ({ resolved: true as const }),
    (error: unknown) => ({ resolved: false as const, error }),
  );
  if (outcome.resolved) throw new Error('accepted, not refused');
  return fieldsOf(outcome.error);
}
