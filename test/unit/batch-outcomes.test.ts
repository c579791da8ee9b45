import { JobPayload } from '../../src/job/payload';
import { type BatchOutcomes, skippedByBatch } from '../../src/server/batch-outcomes';

/** The processor's question to a job's batch before it runs: is the batch invalidated (Ruby Wurk's middleware)? */
describe('a job skipped by its invalidated batch', () => {
  const payload = JobPayload.parse(JSON.stringify({ class: 'Work', args: [], queue: 'default', jid: 'j1', bid: 'b1' }));
  const batches = (skip: boolean): BatchOutcomes => ({ record: async () => undefined, skips: async () => skip });

  it('is said at debug level, naming its class and jid', async () => {
    const lines: string[] = [];
    expect(await skippedByBatch(batches(true), payload, { debug: (line) => void lines.push(line) })).toBe(true);
    expect(lines).toEqual(['class=Work jid=j1 skipped: its batch was invalidated']);
  });

  it('a job its batch lets run says nothing', async () => {
    const lines: string[] = [];
    expect(await skippedByBatch(batches(false), payload, { debug: (line) => void lines.push(line) })).toBe(false);
    expect(lines).toEqual([]);
  });

  it('an answer asked ahead is used; a failed early read (undefined) is asked again', async () => {
    const asked: string[] = [];
    const counting: BatchOutcomes = { record: async () => undefined, skips: async () => (asked.push('again'), true) };
    expect(await skippedByBatch(counting, payload, {}, Promise.resolve(false))).toBe(false);
    expect(asked).toEqual([]);
    expect(await skippedByBatch(counting, payload, {}, Promise.resolve(undefined))).toBe(true);
    expect(asked).toEqual(['again']);
  });
});
