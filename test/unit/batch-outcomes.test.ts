import { JobPayload } from '../../src/job/payload';
import { acknowledgedCounted, type BatchOutcomes, skippedByBatch, SkipsAhead } from '../../src/server/batch-outcomes';
import { claimedJob } from '../../src/server/fetch/claimed-job';

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

/** The read asked as a job's start is sent: only for a job of a batch, and without parsing a job of none. */
describe('SkipsAhead', () => {
  afterEach(() => jest.restoreAllMocks());

  function counting(): { batches: BatchOutcomes; asked: string[] } {
    const asked: string[] = [];
    return {
      asked,
      batches: { record: async () => undefined, skips: async (payload) => (asked.push(payload.jid), true) },
    };
  }

  it('asks the batch of a job that has a bid, and hands the parsed payload and the answer to its run once', async () => {
    const { batches, asked } = counting();
    const ahead = new SkipsAhead(batches);
    const job = claimedJob(JSON.stringify({ class: 'Work', args: [], queue: 'q', jid: 'in-batch', bid: 'b1' }), 'q');
    ahead.ask(job);
    const taken = ahead.take(job);
    expect(taken?.payload.jid).toBe('in-batch');
    expect(await taken?.skip).toBe(true);
    expect(asked).toEqual(['in-batch']);
    expect(ahead.take(job)).toBeUndefined();
  });

  it('does not parse a job whose text has no "bid": most jobs are of no batch, and their run parses them anyway', () => {
    const parse = jest.spyOn(JobPayload, 'parse');
    const { batches, asked } = counting();
    const ahead = new SkipsAhead(batches);
    const job = claimedJob(JSON.stringify({ class: 'Work', args: [], queue: 'q', jid: 'plain' }), 'q');
    ahead.ask(job);
    expect(parse).not.toHaveBeenCalled();
    expect(asked).toEqual([]);
    expect(ahead.take(job)).toBeUndefined();
  });

  it('asks nothing for a job whose "bid" is only in its arguments', () => {
    const { batches, asked } = counting();
    const ahead = new SkipsAhead(batches);
    const job = claimedJob(
      JSON.stringify({ class: 'Work', args: [{ bid: 'not mine' }], queue: 'q', jid: 'args' }),
      'q',
    );
    ahead.ask(job);
    expect(asked).toEqual([]);
    expect(ahead.take(job)).toBeUndefined();
  });
});

/** A batch job's success acknowledged with its count in the same step, when the fetcher can carry it. */
describe('a success acknowledged with its count', () => {
  const parse = (fields: object) =>
    JobPayload.parse(JSON.stringify({ class: 'Work', args: [], queue: 'default', jid: 'j1', ...fields }));
  const job = claimedJob('{}', 'default', { privateKey: 'queue:default|h|1|n|0' });
  const batches: BatchOutcomes = {
    record: async () => undefined,
    bidOf: (payload) => {
      const bid = payload.get<unknown>('bid');
      return bid === 'b1' ? bid : undefined;
    },
  };
  const fetcher = (takes: boolean) => ({ acknowledgeCounted: jest.fn(() => takes) });

  it('goes to the fetcher with the job, its jid and its batch, and is done when the fetcher takes it', () => {
    const reliable = fetcher(true);
    expect(acknowledgedCounted(batches, reliable, job, parse({ bid: 'b1' }))).toBe(true);
    expect(reliable.acknowledgeCounted).toHaveBeenCalledWith(job, 'j1', 'b1');
  });

  it('is not done when the fetcher cannot carry it (a large payload): the caller counts first', () => {
    expect(acknowledgedCounted(batches, fetcher(false), job, parse({ bid: 'b1' }))).toBe(false);
  });

  it('is not tried for a job of no batch, a bid not ours, no batches, or a fetcher that never carries counts', () => {
    const reliable = fetcher(true);
    expect(acknowledgedCounted(batches, reliable, job, parse({}))).toBe(false);
    expect(acknowledgedCounted(batches, reliable, job, parse({ bid: 'not ours' }))).toBe(false);
    expect(acknowledgedCounted(undefined, reliable, job, parse({ bid: 'b1' }))).toBe(false);
    expect(reliable.acknowledgeCounted).not.toHaveBeenCalled();
    expect(acknowledgedCounted(batches, {}, job, parse({ bid: 'b1' }))).toBe(false);
  });
});

/** Under reliable fetch the "skip?" question rides the fetcher's calls. */
describe("a batch's invalidated read lent by the fetcher", () => {
  const payload = JobPayload.parse(JSON.stringify({ class: 'Work', args: [], queue: 'default', jid: 'j1', bid: 'b1' }));
  const batches: BatchOutcomes = {
    record: async () => undefined,
    skips: async () => true,
    skipBidOf: (p) => (p.className === 'Work' ? 'b1' : undefined),
  };

  it("asks the fetcher for the job's batch when it reads batches", async () => {
    const readInvalidated = jest.fn(async () => false);
    await expect(new SkipsAhead(batches, { readInvalidated }).read(payload)).resolves.toBe(false);
    expect(readInvalidated).toHaveBeenCalledWith('b1');
  });

  it('leaves the question to the batch side when the fetcher does not read batches or the job is not asked about', () => {
    expect(new SkipsAhead(batches).read(payload)).toBeUndefined();
    const callback = JobPayload.parse(
      JSON.stringify({ class: 'Callback', args: [], queue: 'q', jid: 'j2', bid: 'b1' }),
    );
    const readInvalidated = jest.fn(async () => false);
    expect(new SkipsAhead(batches, { readInvalidated }).read(callback)).toBeUndefined();
    expect(readInvalidated).not.toHaveBeenCalled();
  });
});
