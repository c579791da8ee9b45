import { Keys } from '../../src/redis/keys';
import { PausedQueues } from '../../src/server/fetch/paused-queues';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

const logger = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** The fetcher's view of Sidekiq Pro's `paused` set, read from a real Redis. */
describe('paused queues as a fetcher sees them', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  afterEach(() => jest.restoreAllMocks());

  /** Moves the clock past the 2 s a read is trusted. */
  function later(ms: number): void {
    const now = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(now + ms);
  }

  it('with every queue paused, a resume made by another process counts at the next call, not a fetch timeout later', async () => {
    await server.redis.sadd(Keys.paused, 'a');
    const paused = new PausedQueues(server.client(), logger);
    expect(await paused.filter(['a'])).toEqual([]);
    await server.redis.srem(Keys.paused, 'a');
    later(2500);
    expect(await paused.filter(['a'])).toEqual(['a']);
  });

  it('with a queue still open, the read goes on in the background: this call answers from the last read', async () => {
    await server.redis.sadd(Keys.paused, 'a');
    const paused = new PausedQueues(server.client(), logger);
    expect(await paused.filter(['a', 'b'])).toEqual(['b']);
    await server.redis.srem(Keys.paused, 'a');
    later(2500);
    expect(await paused.filter(['a', 'b'])).toEqual(['b']);
    // The read that call began lands soon after, and later calls answer from it.
    await waitFor(async () => (await paused.filter(['a', 'b'])).length === 2, { what: 'the background read' });
  });

  it('trusts a read for 2 s: one SMEMBERS however many claims, and a pause made elsewhere meanwhile is seen by the first read after that', async () => {
    const client = server.client();
    const reads = jest.spyOn(client, 'smembers');
    const paused = new PausedQueues(client, logger);
    expect(await paused.filter(['a'])).toEqual(['a']);
    await server.redis.sadd(Keys.paused, 'a');
    for (let claim = 0; claim < 5; claim++) expect(await paused.filter(['a'])).toEqual(['a']);
    expect(reads).toHaveBeenCalledTimes(1);
    later(2500);
    await waitFor(async () => (await paused.filter(['a'])).length === 0, {
      what: 'the pause seen by a read begun after 2 s',
    });
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it('a pause or resume made in this process counts at once, before any read', async () => {
    const paused = new PausedQueues(server.client(), logger);
    expect(await paused.filter(['a', 'b'])).toEqual(['a', 'b']);
    paused.note('a', true);
    expect(paused.has('a')).toBe(true);
    expect(await paused.filter(['a', 'b'])).toEqual(['b']);
    paused.note('a', false);
    expect(paused.has('a')).toBe(false);
    expect(await paused.filter(['a', 'b'])).toEqual(['a', 'b']);
  });

  it('a queue a script found paused is skipped until the next read says otherwise', async () => {
    const paused = new PausedQueues(server.client(), logger);
    expect(await paused.filter(['a', 'b'])).toEqual(['a', 'b']);
    paused.sawPaused('a');
    expect(await paused.filter(['a', 'b'])).toEqual(['b']);
    later(2500);
    await waitFor(async () => (await paused.filter(['a', 'b'])).length === 2, { what: 'the read that finds a open' });
  });

  it('a read that began before a pause made here cannot undo it', async () => {
    const paused = new PausedQueues(server.client(), logger);
    // The first read is under way (SMEMBERS sent, set empty) when the pause is noted.
    const first = paused.filter(['a', 'b']);
    paused.note('a', true);
    expect(await first).toEqual(['b']);
    expect(paused.has('a')).toBe(true);
  });

  it('a pause made here and later undone by another process is open again after the next read', async () => {
    const paused = new PausedQueues(server.client(), logger);
    expect(await paused.filter(['a', 'b'])).toEqual(['a', 'b']);
    paused.note('a', true);
    // Another process resumed it meanwhile: the set never holds it.
    later(2500);
    await waitFor(async () => (await paused.filter(['a', 'b'])).length === 2, { what: 'the read after the note' });
    expect(paused.has('a')).toBe(false);
  });

  it('a set that cannot be read pauses nothing, and says so once until a read succeeds again', async () => {
    const lines: string[] = [];
    const client = server.client();
    const reads = jest.spyOn(client, 'smembers');
    const paused = new PausedQueues(client, { ...logger, error: (line: string) => void lines.push(line) });
    await server.redis.sadd(Keys.paused, 'a');
    expect(await paused.filter(['a', 'b'])).toEqual(['b']);
    await server.redis.del(Keys.paused);
    await server.redis.set(Keys.paused, 'not a set');
    let clock = Date.now();
    /** Lets 2.5 s pass, has one read made, and waits until it has landed. */
    const readAgain = async (): Promise<void> => {
      clock += 2500;
      jest.spyOn(Date, 'now').mockReturnValue(clock);
      const before = reads.mock.results.length;
      await paused.filter(['a', 'b']);
      expect(reads.mock.results).toHaveLength(before + 1);
      await (reads.mock.results[before].value as Promise<unknown>).catch(() => undefined);
      await new Promise((resolve) => setImmediate(resolve));
    };
    await readAgain();
    expect(await paused.filter(['a', 'b'])).toEqual(['a', 'b']);
    expect(lines).toEqual([expect.stringMatching(/^cannot read paused \(pausing nothing\): WRONGTYPE/)]);
    await readAgain();
    expect(lines).toHaveLength(1);
    await server.redis.del(Keys.paused);
    await readAgain();
    await server.redis.set(Keys.paused, 'not a set');
    await readAgain();
    expect(lines).toHaveLength(2);
  });

  it('a set that cannot be read at the very first read is said too', async () => {
    const lines: string[] = [];
    await server.redis.set(Keys.paused, 'not a set');
    const paused = new PausedQueues(server.client(), { ...logger, error: (line: string) => void lines.push(line) });
    expect(await paused.filter(['a'])).toEqual(['a']);
    expect(lines).toEqual([expect.stringMatching(/^cannot read paused \(pausing nothing\): WRONGTYPE/)]);
  });
});
