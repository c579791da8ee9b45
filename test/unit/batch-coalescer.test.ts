import { BatchRecorder } from '../../src/batch/batch-recorder';
import type { BatchStore } from '../../src/batch/batch-store';
import { Coalescer } from '../../src/batch/coalescer';
import { JobPayload } from '../../src/job/payload';

/** A send whose calls are noted and answered (or failed) by the test. */
function manualSend() {
  const calls: Array<{ key: string; inputs: string[]; answer(reply: string): void; fail(error: Error): void }> = [];
  const send = (key: string, inputs: string[]) =>
    new Promise<string>((resolve, reject) => calls.push({ key, inputs, answer: resolve, fail: reject }));
  return { calls, send };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('Coalescer (the calls of a batch’s jobs made together)', () => {
  it('sends the requests of one turn in one call, and those made while it is on its way in the next one', async () => {
    const { calls, send } = manualSend();
    const coalescer = new Coalescer(send);
    const first = [coalescer.request('b1', 'j1'), coalescer.request('b1', 'j2')];
    expect(calls).toHaveLength(0);
    await turn();
    expect(calls.map((call) => call.inputs)).toEqual([['j1', 'j2']]);
    const later = [coalescer.request('b1', 'j3'), coalescer.request('b1', 'j4')];
    await turn();
    expect(calls).toHaveLength(1);
    calls[0].answer('one');
    await expect(Promise.all(first)).resolves.toEqual(['one', 'one']);
    await turn();
    expect(calls.map((call) => call.inputs)).toEqual([
      ['j1', 'j2'],
      ['j3', 'j4'],
    ]);
    calls[1].answer('two');
    await expect(Promise.all(later)).resolves.toEqual(['two', 'two']);
  });

  it('fails each request of a failed call with its error, and only those; the next call still leaves', async () => {
    const { calls, send } = manualSend();
    const coalescer = new Coalescer(send);
    const failing = [coalescer.request('b1', 'j1'), coalescer.request('b1', 'j2')];
    await turn();
    const next = coalescer.request('b1', 'j3');
    calls[0].fail(new Error('redis went away'));
    for (const request of failing) await expect(request).rejects.toThrow('redis went away');
    await turn();
    expect(calls[1].inputs).toEqual(['j3']);
    calls[1].answer('ok');
    await expect(next).resolves.toBe('ok');
  });

  it('keeps a call per key: one batch never waits for another', async () => {
    const { calls, send } = manualSend();
    const coalescer = new Coalescer(send);
    const a = coalescer.request('b1', 'j1');
    await turn();
    const b = coalescer.request('b2', 'j2');
    await turn();
    expect(calls.map((call) => [call.key, call.inputs])).toEqual([
      ['b1', ['j1']],
      ['b2', ['j2']],
    ]);
    calls[1].answer('b2');
    await expect(b).resolves.toBe('b2');
    calls[0].answer('b1');
    await expect(a).resolves.toBe('b1');
  });

  it('carries at most maxPerCall requests a call', async () => {
    const { calls, send } = manualSend();
    const coalescer = new Coalescer(send, 2);
    const requests = ['j1', 'j2', 'j3'].map((jid) => coalescer.request('b1', jid));
    await turn();
    calls[0].answer('first');
    await turn();
    calls[1].answer('second');
    await expect(Promise.all(requests)).resolves.toEqual(['first', 'first', 'second']);
    expect(calls.map((call) => call.inputs)).toEqual([['j1', 'j2'], ['j3']]);
  });

  it('survives a send that throws at once', async () => {
    const coalescer = new Coalescer<string, string>(() => {
      throw new Error('no connection');
    });
    await expect(coalescer.request('b1', 'j1')).rejects.toThrow('no connection');
    await expect(coalescer.request('b1', 'j2')).rejects.toThrow('no connection');
  });
});

describe('BatchRecorder (one call for the jobs of a batch)', () => {
  const bid = 'AAAAAAAAAAAAAA';
  const job = (jid: string, className = 'Work') => JobPayload.parse(JSON.stringify({ class: className, jid, bid }));
  const reply = (invalidated: boolean) =>
    ({
      exists: true,
      fired: [],
      pending: 0,
      failures: 0,
      live: 0,
      died: 0,
      changed: 1,
      cascaded: [],
      invalidated,
    }) as const;

  it('answers "invalidated?" from the settle call that counts the successes asked for in the same turn', async () => {
    const settle = jest.fn(async () => reply(true));
    const isInvalidated = jest.fn(async () => false);
    const recorder = new BatchRecorder({ settle, isInvalidated } as unknown as BatchStore);
    const [skipped] = await Promise.all([
      recorder.skips(job('j3')),
      recorder.record(job('j1'), 'success'),
      recorder.record(job('j2'), 'success'),
    ]);
    expect(skipped).toBe(true);
    expect(settle.mock.calls).toEqual([[bid, 'success', 'j1', '', ['j2']]]);
    expect(isInvalidated).not.toHaveBeenCalled();
  });

  it('reads alone when no success waits, and tells failures one by one with their error', async () => {
    const settle = jest.fn(async () => reply(false));
    const isInvalidated = jest.fn(async () => false);
    const recorder = new BatchRecorder({ settle, isInvalidated } as unknown as BatchStore);
    expect(await Promise.all([recorder.skips(job('j1')), recorder.skips(job('j2'))])).toEqual([false, false]);
    expect(isInvalidated).toHaveBeenCalledTimes(1);
    await recorder.record(job('j1'), 'failure', new Error('boom'));
    expect(settle.mock.calls).toEqual([[bid, 'failure', 'j1', '{"error_class":"Error","error_message":"boom"}']]);
  });
});
