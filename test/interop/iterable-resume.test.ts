import { SIZE, sweepThroughRestarts } from '../chaos/fixtures/sweep';
import { useSweepProcesses } from '../chaos/fixtures/sweep-processes';
import { usePrivateRedis } from '../support/private-redis';
import { SIDEKIQ_7, SIDEKIQ_8 } from '../support/sidekiq';

/**
 * An iterable job shared by wurk and stock Sidekiq: SweepJob over 100,000 items, run in turn by wurk and Sidekiq
 * processes (a Ruby class of the same name, test/interop/ruby/sweep.rb), each SIGTERMed at a gate. Each resumes the
 * other's cursor from `it-<jid>` (`ex`, `c`, `rt`), every item is processed, at most one batch again per interruption.
 */
describe.each([SIDEKIQ_7, SIDEKIQ_8])('iterable jobs resumed across wurk and Sidekiq $version', (version) => {
  const server = usePrivateRedis();
  const processes = useSweepProcesses(server);

  it('wurk, Sidekiq, wurk, ... each resumes where the other stopped, through to the final cursor', async () => {
    const started = Date.now();
    const report = await sweepThroughRestarts(server.client(), (index) =>
      index % 2 === 0 ? processes.wurk() : processes.sidekiq(version),
    );
    expect(report.runs.map((who) => who.split('-')[0])).toEqual(['wurk', 'ruby', 'wurk', 'ruby', 'wurk', 'ruby']);
    expect(report.missed).toBe(0);
    for (const again of report.reprocessed) expect(again).toBeLessThanOrEqual(SIZE);
    // The last run was Sidekiq's: its own view of the cursor and the executions wurk counted before it.
    expect(report.final).toEqual({ cursor: 99_000, executions: 6, who: report.runs[5] });
    expect(report.leftovers).toEqual({ state: 0, queued: 0, retry: 0, dead: 0 });
    process.stdout.write(
      `iterable interop (Sidekiq ${version.version}): re-processed ${report.reprocessed.join(', ')}; ${Date.now() - started} ms\n`,
    );
  }, 120000);
});
