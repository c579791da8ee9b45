import { usePrivateRedis } from '../support/private-redis';
import { SIZE, sweepThroughRestarts } from './fixtures/sweep';
import { useSweepProcesses } from './fixtures/sweep-processes';

/**
 * The iterable jobs guarantee under deploys: one job over 100,000 items, its worker process SIGTERMed and replaced
 * five times. Every item is processed, at most one batch again per interruption, and the job ends with its final
 * cursor, nothing left behind.
 */
describe('chaos: an iterable job through five SIGTERM restarts', () => {
  const server = usePrivateRedis();
  const processes = useSweepProcesses(server);

  it('processes every item, at most one batch again per interruption, and ends at the final cursor', async () => {
    const started = Date.now();
    const report = await sweepThroughRestarts(server.client(), () => processes.wurk());
    expect(report.runs).toHaveLength(6);
    expect(new Set(report.runs).size).toBe(6);
    expect(report.missed).toBe(0);
    expect(report.reprocessed).toHaveLength(5);
    for (const again of report.reprocessed) expect(again).toBeLessThanOrEqual(SIZE);
    expect(report.final).toEqual({ cursor: 99_000, executions: 6, who: report.runs[5] });
    expect(report.leftovers).toEqual({ state: 0, queued: 0, retry: 0, dead: 0 });
    process.stdout.write(
      `iterable restarts: re-processed per interruption ${report.reprocessed.join(', ')}; ${Date.now() - started} ms\n`,
    );
  }, 90000);
});
