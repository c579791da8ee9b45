import { PrefetchBuffer, PrefetchBufferDeps } from '../../src/server/capsule/prefetch-buffer';
import type { SlotPool } from '../../src/server/capsule/slot-pool';
import { ClaimedJob, claimedJob, markStarted } from '../../src/server/fetch/claimed-job';
import type { Fetcher } from '../../src/server/fetch/fetcher';
import type { PausedQueues } from '../../src/server/fetch/paused-queues';
import { SuspectGate } from '../../src/server/suspect-gate';

const CLAIMED = 'queue:q|host|1|n|1';
const STARTED = 'queue:q|host|1|n|0';

/**
 * A start moves the oldest job of the claimed list, which is the one the buffer expects unless that one was handed
 * back meanwhile: then the start answers with the job that came in its place, a new object whose twin (same payload)
 * still waits in the buffer. What the claim knew of it (a suspect, recovered after it started in a process that died)
 * must carry over, and the stale entry must go.
 */
describe('prefetch buffer: a start that answers with another job than the one expected', () => {
  /** A buffer whose fetcher's start of the job 'E' answers with `answer`, and of any other job with that job. */
  function harness(answer: ClaimedJob, concurrency: number) {
    const starting = new Set<Promise<void>>();
    const dispatched: ClaimedJob[] = [];
    const givenBack: ClaimedJob[][] = [];
    const slots = {
      get occupied() {
        return starting.size + dispatched.length;
      },
      holdStart(_job: ClaimedJob, begun: Promise<void>) {
        starting.add(begun);
        void begun.finally(() => starting.delete(begun));
      },
      dispatch: (job: ClaimedJob) => void dispatched.push(job),
    };
    const fetcher = {
      start: async (expected: ClaimedJob) => {
        if (expected.raw === 'E') return answer;
        markStarted(expected, STARTED);
        return expected;
      },
      flush: async () => undefined,
      giveBack: async (jobs: ClaimedJob[]) => void givenBack.push(jobs),
    };
    const gate = new SuspectGate();
    const deps: PrefetchBufferDeps = {
      concurrency,
      prefetch: 10,
      stallMs: undefined,
      slots: slots as unknown as SlotPool,
      fetcher: fetcher as unknown as Fetcher,
      gate,
      pool: { occupied: 0, startPrefetched: () => undefined, interruptClaim: () => undefined },
      paused: { has: () => false } as unknown as PausedQueues,
      logger: { log: () => undefined, warn: () => undefined, error: () => undefined },
      label: '',
      quieted: () => false,
      fetchFailing: () => false,
      workChanged: () => undefined,
      wakeFetchLoop: () => undefined,
      willStart: () => undefined,
    };
    const buffer = new PrefetchBuffer(deps);
    const pool = {
      get occupied() {
        return slots.occupied;
      },
      startPrefetched: () => buffer.startPrefetched(),
      interruptClaim: () => undefined,
    };
    deps.pool = pool;
    gate.add(pool);
    const landed = async () => {
      while (starting.size > 0) await Promise.allSettled([...starting]);
    };
    return { buffer, dispatched, givenBack, gate, landed };
  }

  /** The job a start moved in place of `expected`: what the script's reply names, known by its payload only. */
  function cameInstead(raw: string): ClaimedJob {
    const job = claimedJob(raw, 'q', { privateKey: CLAIMED });
    markStarted(job, STARTED);
    return job;
  }

  it('a suspect that came in its place is given back unstarted: it never runs beside other jobs', async () => {
    const instead = cameInstead('S');
    const { buffer, dispatched, givenBack, gate, landed } = harness(instead, 2);
    buffer.add([
      claimedJob('E', 'q', { privateKey: CLAIMED }),
      claimedJob('S', 'q', { privateKey: CLAIMED, suspect: true }),
    ]);
    buffer.startPrefetched();
    await landed();
    expect(dispatched).toEqual([]);
    expect(givenBack).toEqual([[instead]]);
    expect(instead.suspect).toBe(true);
    // Its stale twin is gone: nothing is left to start it a second time.
    expect(buffer.length).toBe(0);
    expect(gate.isolating).toBe(false);
  });

  it('an ordinary job that came in its place runs, and its stale entry leaves the buffer', async () => {
    const instead = cameInstead('B');
    const { buffer, dispatched, givenBack, landed } = harness(instead, 1);
    const other = claimedJob('B', 'other', { privateKey: CLAIMED });
    buffer.add([claimedJob('E', 'q', { privateKey: CLAIMED }), other, claimedJob('B', 'q', { privateKey: CLAIMED })]);
    buffer.startPrefetched();
    await landed();
    expect(dispatched).toEqual([instead]);
    expect(givenBack).toEqual([]);
    expect(instead.suspect).toBeFalsy();
    // The same payload on another queue is another job: it stays.
    expect(buffer.takeAll()).toEqual([other]);
  });
});
