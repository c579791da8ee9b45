/**
 * Runs settled at their `timeout` or `deadline` whose perform has not returned yet. Node cannot stop a function on
 * its own thread, so the slot of such a run stays taken until it really returns, and a retry of it that another slot
 * of this process fetches waits for it: a runaway never runs beside its own retry in one process.
 */
import type { JobPayload } from '../job/payload';
import type { LimitedRun } from './limited-run';
import { errorClassOf, errorMessageOf } from './retry/error-fields';
import type { ServerLogger } from './server-logger';

/** By jid, for every processor of the process: a retry may be fetched by any capsule. */
const alive = new Map<string, Promise<void>>();

/** Resolves once no runaway of this jid is alive here; undefined at once while none is (the common path). */
export function runawayOf(jid: string): Promise<void> | undefined {
  return alive.get(jid);
}

/**
 * Marks the run a runaway until `performing` ends, then logs how it ended (its outcome is discarded: the job was
 * settled at its limit). Call before the job is filed, so its retry cannot be fetched before the mark.
 */
export function outlive(
  payload: JobPayload,
  performing: Promise<unknown>,
  limited: LimitedRun,
  logger: ServerLogger,
): Promise<void> {
  const outliving = loggedEnd(payload, performing, limited, logger).finally(() => {
    if (alive.get(payload.jid) === outliving) alive.delete(payload.jid);
  });
  alive.set(payload.jid, outliving);
  return outliving;
}

async function loggedEnd(
  payload: JobPayload,
  performing: Promise<unknown>,
  limited: LimitedRun,
  logger: ServerLogger,
): Promise<void> {
  let ended = 'returned';
  try {
    await performing;
  } catch (late) {
    ended = `threw ${errorClassOf(late)}: ${errorMessageOf(late)}`;
  }
  const after = ((performance.now() - limited.firedAt) / 1000).toFixed(3);
  logger.warn(
    `class=${payload.className} jid=${payload.jid} ${ended} ${after} s after its ${limited.limit} fired; ` +
      'the job was already settled, so this outcome is discarded',
  );
}
