import { claimedJob, startedJob } from '../../src/server/fetch/claimed-job';
import type { OwnLists } from '../../src/server/fetch/reliable/own-lists';
import { StartBatcher } from '../../src/server/fetch/reliable/start-batcher';

/** Resolves in the next check phase of the event loop; code after `await turn()` runs inside that phase. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

function batcher(): { starts: StartBatcher; send: jest.Mock } {
  const lists = {
    count: () => undefined,
    privateKey: (queue: string) => `queue:${queue}|0`,
    claimedKey: (queue: string) => `queue:${queue}|1`,
  } as unknown as OwnLists;
  const send = jest.fn(async () => undefined);
  return { starts: new StartBatcher(lists, () => undefined, send), send };
}

const job = (n: number) => claimedJob(`{"jid":"${n}"}`, 'default', { privateKey: 'queue:default|1' });

describe('StartBatcher: the starts of one turn go in one call, riding a claim when one takes them', () => {
  it('sends the starts nobody took in a call of their own, two turns after the first ask', async () => {
    const { starts, send } = batcher();
    void starts.ask(job(1));
    void starts.ask(job(2));
    await turn();
    expect(send).not.toHaveBeenCalled();
    await turn();
    expect(send).toHaveBeenCalledTimes(1);
    expect(starts.take().starts.map(({ expected }) => expected.raw)).toEqual([job(1).raw, job(2).raw]);
  });

  it('sends nothing when a claim took them meanwhile', async () => {
    const { starts, send } = batcher();
    void starts.ask(job(1));
    starts.take();
    await turn();
    await turn();
    await turn();
    expect(send).not.toHaveBeenCalled();
  });

  it('does not send starts asked for after a claim took the earlier ones before their own two turns are up', async () => {
    const { starts, send } = batcher();
    void starts.ask(job(1));
    // A claim on its way carries it.
    starts.take();
    await turn();
    // In the turn the earlier ask's send was scheduled from: a slot frees and asks for the next start.
    void starts.ask(job(2));
    await turn();
    // The earlier ask's send has run by now: it must have left job 2 for the claim its freed slot woke.
    expect(send).not.toHaveBeenCalled();
    expect(starts.take().starts.map(({ expected }) => expected.raw)).toEqual([job(2).raw]);
    await turn();
    expect(send).not.toHaveBeenCalled();
  });

  it('still sends starts asked for after a take when no claim takes them', async () => {
    const { starts, send } = batcher();
    void starts.ask(job(1));
    starts.take();
    await turn();
    void starts.ask(job(2));
    await turn();
    await turn();
    expect(send).toHaveBeenCalledTimes(1);
  });
});

describe('StartBatcher: the reply of a call settles each start with what its own queue moved', () => {
  it('a start whose queue moved nothing gets null, never the job another queue moved in the same call', async () => {
    const { starts } = batcher();
    const a = claimedJob('{"jid":"a"}', 'a', { privateKey: 'queue:a|1' });
    const b = claimedJob('{"jid":"b"}', 'b', { privateKey: 'queue:b|1' });
    const startedA = starts.ask(a);
    const startedB = starts.ask(b);
    starts.settle(starts.take(), [startedJob(b.raw, 'b', 'queue:b|0')], new Map(), new Set());
    expect(await startedA).toBeNull();
    expect(await startedB).toBe(b);
    expect(b.state).toBe('started');
  });
});
