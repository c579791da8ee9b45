import { cancelIteration } from '../../src/iterable/iteration-state';
import { waitFor } from '../support/wait';
import { SIZE, SWEEP_JID, sweepThroughRestarts, TOTAL } from '../chaos/fixtures/sweep';
import { useSweepProcesses } from '../chaos/fixtures/sweep-processes';
import { usePrivateRedis } from '../support/private-redis';
import { runRuby, SIDEKIQ_7, SIDEKIQ_8 } from '../support/sidekiq';

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

  it('a cancel from either side is honoured by the other: nothing iterated, completed with no cursor', async () => {
    const redis = server.client();
    await redis.flushall();
    const push = async () => {
      const now = Date.now() / 1000;
      const job = { class: 'SweepJob', args: [TOTAL, SIZE], queue: 'default', jid: SWEEP_JID, retry: true };
      await redis.lpush('queue:default', JSON.stringify({ ...job, created_at: now, enqueued_at: now }));
    };
    // wurk cancels, Sidekiq runs: the job stops at its start (and can load the hash: `c` is null, not absent).
    await cancelIteration(redis, SWEEP_JID);
    const ruby = await processes.sidekiq(version);
    await push();
    const byRuby = await waitFor(() => redis.get('sweep:final'), { timeout: 30000, what: 'Sidekiq to complete' });
    expect(JSON.parse(byRuby)).toEqual({ cursor: null, executions: 1, who: ruby.who });
    await ruby.stop();

    // Sidekiq's Client#cancel!, wurk runs.
    await redis.del('sweep:final');
    await runRuby(`Sidekiq::Client.new.cancel!('${SWEEP_JID}'); puts '{}'`, server.url, {}, version);
    const wurk = await processes.wurk();
    await push();
    const byWurk = await waitFor(() => redis.get('sweep:final'), { timeout: 30000, what: 'wurk to complete' });
    expect(JSON.parse(byWurk)).toEqual({ cursor: null, executions: 1, who: wurk.who });
    expect(await redis.llen('sweep:log')).toBe(0);
    await wurk.stop();
  }, 120000);
});
