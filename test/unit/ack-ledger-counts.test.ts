import { AckLedger } from '../../src/server/fetch/reliable/ack-ledger';
import { BatchReads } from '../../src/server/fetch/reliable/batch-groups';

/**
 * A counted ack (a job of a batch) carries its success's count wherever the ack goes, so an ack never lands without
 * its count: taken with it, held again with it when the call failed, replayed with it after a master switch; at
 * shutdown one still held is not handed to release.lua (which cannot count), so its job runs again instead.
 */
describe('counted acks in the acknowledgment ledger', () => {
  const LIST = 'queue:q|host|1|n|0';

  it('a call takes the counts with their acks, and a failed call holds both again', () => {
    const ledger = new AckLedger(0);
    ledger.hold(LIST, 'plain', 'j0');
    ledger.hold(LIST, 'counted', 'j1', { bid: 'B', jid: 'j1' });
    expect(ledger.countsHeld).toBe(1);
    const batch = ledger.take();
    expect([...batch.counted]).toEqual([['counted', { bid: 'B', jid: 'j1' }]]);
    expect(ledger.countsHeld).toBe(0);
    ledger.failed(batch);
    ledger.settled(batch);
    expect(ledger.countsHeld).toBe(1);
    const again = ledger.take();
    expect(again.held.get(LIST)).toEqual(['plain', 'counted']);
    expect([...again.counted]).toEqual([['counted', { bid: 'B', jid: 'j1' }]]);
  });

  it('a refused whole-list drop holds its acks again without their counts, which landed before the drop', () => {
    const ledger = new AckLedger(0);
    ledger.hold(LIST, 'counted', 'j1', { bid: 'B', jid: 'j1' });
    const batch = ledger.take();
    ledger.keepRefusedDrop(batch, LIST);
    expect(ledger.countsHeld).toBe(0);
    expect(ledger.take().held.get(LIST)).toEqual(['counted']);
  });

  it('at shutdown a counted ack still held is left out of what release.lua acknowledges', () => {
    const ledger = new AckLedger(0);
    ledger.hold(LIST, 'plain', 'j0');
    ledger.hold(LIST, 'counted', 'j1', { bid: 'B', jid: 'j1' });
    expect(ledger.takeAll().get(LIST)).toEqual(['plain']);
    expect(ledger.countsHeld).toBe(0);
  });

  it('after a master switch the acks sent lately are replayed with their counts', () => {
    const ledger = new AckLedger(60000);
    ledger.hold(LIST, 'plain', 'j0');
    ledger.hold(LIST, 'counted', 'j1', { bid: 'B', jid: 'j1' });
    const batch = ledger.take();
    ledger.settled(batch);
    ledger.rememberSent(batch);
    ledger.replay();
    const replayed = ledger.take();
    expect(replayed.held.get(LIST)).toEqual(['plain', 'counted']);
    expect([...replayed.counted]).toEqual([['counted', { bid: 'B', jid: 'j1' }]]);
    expect(replayed.replayed).toBe(true);
  });
});

describe('batch reads riding the fetch calls', () => {
  const turns = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(() => setImmediate(resolve))));

  it('a read no call took within two turns sends a call of its own, once for all the reads of the turn', async () => {
    const send = jest.fn(async () => undefined);
    const reads = new BatchReads(send);
    const first = reads.ask('A');
    const second = reads.ask('B');
    const third = reads.ask('A');
    await turns();
    expect(send).toHaveBeenCalledTimes(1);
    const taken = reads.take();
    expect([...taken.keys()]).toEqual(['A', 'B']);
    expect(taken.get('A')).toHaveLength(2);
    for (const [bid, resolvers] of taken) for (const resolve of resolvers) resolve(bid === 'A');
    await expect(Promise.all([first, second, third])).resolves.toEqual([true, false, true]);
  });

  it('reads a call took before the send was due send nothing of their own', async () => {
    const send = jest.fn(async () => undefined);
    const reads = new BatchReads(send);
    void reads.ask('A');
    reads.take();
    await turns();
    expect(send).not.toHaveBeenCalled();
  });
});
