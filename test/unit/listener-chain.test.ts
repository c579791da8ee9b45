import { JobPayload } from '../../src/job/payload';
import { ListenerChain } from '../../src/server/listener-chain';
import type { JobLifecycleListener, ServerContext } from '../../src/server/server-middleware';

/** The job lifecycle listeners, told in order; none of them can change a job's fate or stop the others. */
describe('server: the listener chain', () => {
  const context = { job: JobPayload.parse('{"class":"Work","args":[]}') } as ServerContext;
  const chain = (listeners: JobLifecycleListener[]) => {
    const errors: string[] = [];
    return { errors, chain: new ListenerChain(listeners, { error: (message: string) => void errors.push(message) }) };
  };

  it('answer synchronously at no cost: notify returns nothing to await, and a non-promise answer is no error', () => {
    const { chain: listeners, errors } = chain([
      { onStart: () => 42 as never, onSettled: () => ({ then: 'no' }) as never },
    ]);
    expect(listeners.notify(context, undefined)).toBeUndefined();
    expect(listeners.notify(context, { kind: 'complete', result: 1 })).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it('a listener without the hook is skipped; one that throws is logged and the rest still run, in order, each awaited', async () => {
    const calls: string[] = [];
    let releaseFirst!: () => void;
    const { chain: listeners, errors } = chain([
      {},
      {
        onStart: () => {
          throw new Error('start bug');
        },
      },
      { onStart: () => new Promise<void>((resolve) => (releaseFirst = () => (calls.push('async'), resolve()))) },
      { onStart: async () => Promise.reject(new Error('rejected')) },
      { onStart: () => void calls.push('after') },
    ]);
    const done = listeners.notify(context, undefined);
    expect(done).toBeInstanceOf(Promise);
    expect(calls).toEqual([]);
    releaseFirst();
    await done;
    expect(calls).toEqual(['async', 'after']);
    expect(errors).toEqual([
      'job lifecycle listener failed (ignored): start bug',
      'job lifecycle listener failed (ignored): rejected',
    ]);
  });

  it('tells onSettled with the outcome, and reads the listener list at each call (a listener added later is told)', async () => {
    const seen: unknown[] = [];
    const list: JobLifecycleListener[] = [];
    const { chain: listeners } = chain(list);
    expect(listeners.notify(context, { kind: 'dead', error: new Error('x'), reason: 'x' })).toBeUndefined();
    list.push({
      onStart: () => void seen.push('start'),
      onSettled: async (_context, outcome) => void seen.push(outcome.kind),
    });
    await listeners.notify(context, { kind: 'interrupted' });
    expect(seen).toEqual(['interrupted']);
  });
});
