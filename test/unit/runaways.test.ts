import { JobPayload } from '../../src/job/payload';
import type { LimitedRun } from '../../src/server/limited-run';
import { outlive, runawayOf } from '../../src/server/runaways';
import type { ServerLogger } from '../../src/server/server-logger';

/** A logger that keeps its warnings in `lines`. */
function warnings(lines: string[]): ServerLogger {
  return { log: () => undefined, warn: (line: string) => void lines.push(line), error: () => undefined };
}

/** A run whose limit fell `agoMs` ago, as the processor hands it over. */
function fallen(agoMs: number, limit: 'timeout' | 'deadline' = 'timeout'): LimitedRun {
  return { limit, firedAt: performance.now() - agoMs } as LimitedRun;
}

function job(jid: string): JobPayload {
  return JobPayload.parse(JSON.stringify({ class: 'Slow', args: [], queue: 'q', jid }));
}

/** A perform still going, and the hands that end it. */
function performing(): { promise: Promise<unknown>; resolve(): void; reject(error: unknown): void } {
  let resolve: () => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<unknown>((yes, no) => ((resolve = () => yes(undefined)), (reject = no)));
  return { promise, resolve, reject };
}

/**
 * A run settled at its limit whose perform has not returned: its retry in this process waits for it, and how it
 * finally ended is said in one line (its outcome is discarded).
 */
describe('runaways: runs that outlive their limit', () => {
  it("holds the jid's retry until the perform returns, then lets it go, and says it returned and how late", async () => {
    const lines: string[] = [];
    const perform = performing();
    expect(runawayOf('r1')).toBeUndefined();
    const outliving = outlive(job('r1'), perform.promise, fallen(2500), warnings(lines));
    expect(runawayOf('r1')).toBe(outliving);
    expect(runawayOf('other')).toBeUndefined();
    perform.resolve();
    await outliving;
    expect(runawayOf('r1')).toBeUndefined();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^class=Slow jid=r1 returned 2\.5\d\d s after its timeout fired; the job was already settled, so this outcome is discarded$/,
    );
  });

  it('says what a perform threw when it finally ended, naming the deadline that fired', async () => {
    const lines: string[] = [];
    const perform = performing();
    const outliving = outlive(job('r2'), perform.promise, fallen(1000, 'deadline'), warnings(lines));
    perform.reject(new TypeError('late failure'));
    await outliving;
    expect(runawayOf('r2')).toBeUndefined();
    expect(lines[0]).toMatch(/^class=Slow jid=r2 threw TypeError: late failure 1\.0\d\d s after its deadline fired; /);
  });

  it('a newer runaway of the same jid keeps its mark when an older one ends', async () => {
    const older = performing();
    const newer = performing();
    const first = outlive(job('r3'), older.promise, fallen(10), warnings([]));
    const second = outlive(job('r3'), newer.promise, fallen(5), warnings([]));
    older.resolve();
    await first;
    expect(runawayOf('r3')).toBe(second);
    newer.resolve();
    await second;
    expect(runawayOf('r3')).toBeUndefined();
  });
});
