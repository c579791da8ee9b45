import { KnownJobs } from '../../src/server/fetch/known-jobs';

/** What reconcile counts as a capsule's own job, by list. */
describe('fetch: known jobs', () => {
  it('a running job is known in any list, a prefetched one only in its own list', () => {
    const known = new KnownJobs();
    known.add('running');
    known.addIn('claimed', 'prefetched');
    known.addIn('claimed', 'prefetched-too');
    expect([known.has('claimed', 'running'), known.has('in-progress', 'running')]).toEqual([true, true]);
    expect([
      known.has('claimed', 'prefetched'),
      known.has('claimed', 'prefetched-too'),
      known.has('in-progress', 'prefetched'),
    ]).toEqual([true, true, false]);
    expect(known.has('claimed', 'stranger')).toBe(false);
  });

  it('a starting job is known in any list, and counts as starting only while nothing holds it as running', () => {
    const known = new KnownJobs();
    known.addStarting('starting');
    expect([
      known.has('claimed', 'starting'),
      known.has('in-progress', 'starting'),
      known.isStarting('starting'),
    ]).toEqual([true, true, true]);
    expect(known.isStarting('other')).toBe(false);
    known.add('starting');
    expect(known.isStarting('starting')).toBe(false);
  });
});
