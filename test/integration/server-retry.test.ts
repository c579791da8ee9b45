import { inflateSync } from 'node:zlib';
import { JobPayload } from '../../src/job/payload';
import type { JobOutcome } from '../../src/server/server-middleware';
import { retryDelaySeconds } from '../../src/server/retry/backoff';
import { usePrivateRedis } from '../support/private-redis';
import { buildManager, useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

class CustomError extends Error {}

describe('retries and dead, as Sidekiq', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);
  const outcomes: JobOutcome[] = [];
  const deaths: string[] = [];
  const errors: string[] = [];

  afterEach(() => {
    outcomes.length = 0;
    deaths.length = 0;
    errors.length = 0;
  });

  const failing = {
    perform: (message: string) => {
      throw new CustomError(message);
    },
  };

  async function run(
    raw: Record<string, unknown>,
    extra: Partial<Parameters<typeof buildManager>[2]> = {},
    instance: object = failing,
  ) {
    const h = harness([{ name: 'FailJob', instance: instance as never }], {
      deathHandlers: [(job, error) => void deaths.push(`${job.jid} ${(error as Error).message}`)],
      errorHandlers: [(error) => void errors.push((error as Error).message)],
      ...extra,
    });
    h.manager.addListener({ onSettled: (_context, outcome) => void outcomes.push(outcome) });
    await server.client().lpush(
      'queue:default',
      JSON.stringify({
        class: 'FailJob',
        queue: 'default',
        jid: 'cccccccccccccccccccccccc',
        created_at: 1795933789.5,
        enqueued_at: 1795933789.5,
        ...raw,
      }),
    );
    await h.manager.start();
    await waitFor(() => outcomes.length === 1, { what: 'the job to settle' });
    return h;
  }

  it('files the first failure in retry: retry_count 0, failed_at, error fields, backoff 15 s + jitter', async () => {
    const before = Date.now() / 1000;
    await run({ retry: true, args: ['boom'] });
    const [entry, score] = await server.client().zrange('retry', 0, '-1', 'WITHSCORES');
    const job = JSON.parse(entry);
    expect(job).toMatchObject({ retry_count: 0, error_class: 'CustomError', error_message: 'boom', queue: 'default' });
    expect(job.failed_at).toBeGreaterThanOrEqual(before);
    expect(job.retried_at).toBeUndefined();
    expect(JobPayload.parse(entry).getRaw('failed_at')).toMatch(/\./);
    const delay = Number(score) - job.failed_at;
    expect(delay).toBeGreaterThanOrEqual(15 - 0.5);
    expect(delay).toBeLessThanOrEqual(15 + 9 + 0.5);
    expect(outcomes[0]).toMatchObject({ kind: 'retrying', retryCount: 0 });
    expect(errors).toEqual(['boom']);
  });

  it('bumps retry_count, keeps failed_at, stamps retried_at and uses retry_queue', async () => {
    await run({ retry: 5, retry_count: 2, failed_at: 1795933000.25, args: ['again'], retry_queue: 'slow' });
    const [entry] = await server.client().zrange('retry', 0, '-1');
    const job = JSON.parse(entry);
    expect(job).toMatchObject({ retry_count: 3, failed_at: 1795933000.25, queue: 'slow' });
    expect(typeof job.retried_at).toBe('number');
  });

  it('sends retry: 0 straight to dead, runs death handlers, and trims dead in the same step', async () => {
    const redis = server.client();
    await redis.zadd('dead', '1', 'ancient-entry');
    await run({ retry: 0, args: ['zero'] }, { deadTimeout: 3600 });
    const dead = await redis.zrange('dead', 0, '-1');
    expect(dead).toHaveLength(1);
    expect(JSON.parse(dead[0])).toMatchObject({ retry_count: 0, error_message: 'zero' });
    expect(deaths).toEqual(['cccccccccccccccccccccccc zero']);
    expect(outcomes[0].kind).toBe('dead');
  });

  it('keeps at most deadMaxJobs dead entries, dropping the oldest', async () => {
    const redis = server.client();
    const now = Date.now() / 1000;
    await redis.zadd('dead', String(now - 30), 'old-1', String(now - 20), 'old-2', String(now - 10), 'old-3');
    await run({ retry: 0, args: ['full'] }, { deadMaxJobs: 3 });
    const dead = await redis.zrange('dead', 0, '-1');
    expect(dead).toHaveLength(3);
    expect(dead.slice(0, 2)).toEqual(['old-2', 'old-3']);
    expect(JSON.parse(dead[2]).jid).toBe('cccccccccccccccccccccccc');
  });

  it('drops retry: false (no retry, no dead) but counts the failure', async () => {
    const h = await run({ retry: false, args: ['gone'] });
    const redis = server.client();
    expect(await redis.zcard('retry')).toBe(0);
    expect(await redis.zcard('dead')).toBe(0);
    expect(h.heartbeat.failed).toBe(1);
    expect(outcomes[0].kind).toBe('failed');
    await waitFor(async () => (await redis.keys('queue:default|*')).length === 0);
  });

  it('discards at exhaustion with dead: false', async () => {
    await run({ retry: 1, retry_count: 0, dead: false, args: ['x'] });
    expect(await server.client().zcard('dead')).toBe(0);
    expect(outcomes[0].kind).toBe('failed');
    expect(deaths).toHaveLength(1);
  });

  it('ignores the count when retry_for is set (Sidekiq 8.1) and goes dead once the window has passed', async () => {
    const first = await run({
      retry: 1,
      retry_count: 5,
      retry_for: 3600,
      failed_at: Date.now() / 1000 - 60,
      args: ['window'],
    });
    expect(await server.client().zcard('retry')).toBe(1);
    await first.stop();
    await server.client().del('retry');
    outcomes.length = 0;
    await run({ retry: 25, retry_count: 0, retry_for: 60, failed_at: Date.now() / 1000 - 3600, args: ['late'] });
    expect(await server.client().zcard('dead')).toBe(1);
  });

  it('honours retryIn (seconds, kill, discard) and retriesExhausted', async () => {
    const redis = server.client();
    const worker = { ...failing, retryIn: (count: number) => (count === 0 ? 100 : count === 1 ? 'kill' : 'discard') };
    const custom = await run({ retry: 3, args: ['custom'] }, {}, worker);
    const [, score] = await redis.zrange('retry', 0, '-1', 'WITHSCORES');
    const delay = Number(score) - Date.now() / 1000;
    expect(delay).toBeGreaterThan(95);
    expect(delay).toBeLessThanOrEqual(100 + 9 + 1);
    await custom.stop();
    await redis.flushall();
    outcomes.length = 0;
    const killed = await run({ retry: 3, retry_count: 0, args: ['kill'] }, {}, worker);
    expect(await redis.zcard('dead')).toBe(1);
    await killed.stop();
    await redis.flushall();
    outcomes.length = 0;
    const exhaustedSeen: string[] = [];
    await run(
      { retry: 0, args: ['ex'] },
      {},
      { ...failing, retriesExhausted: (job: JobPayload) => (exhaustedSeen.push(job.jid), 'discard') },
    );
    expect(exhaustedSeen).toEqual(['cccccccccccccccccccccccc']);
    expect(await redis.zcard('dead')).toBe(0);
  });

  it('stores error_backtrace as zlib + strict base64 of a JSON array, limited to `backtrace` lines', async () => {
    await run({ retry: true, backtrace: 2, args: ['trace'] });
    const [entry] = await server.client().zrange('retry', 0, '-1');
    const encoded = JSON.parse(entry).error_backtrace as string;
    expect(encoded).toMatch(/^eJ[A-Za-z0-9+/=]+$/);
    const lines = JSON.parse(inflateSync(Buffer.from(encoded, 'base64')).toString('utf8'));
    expect(lines).toHaveLength(2);
    expect(typeof lines[0]).toBe('string');
  });

  it('truncates error_message to 10,000 characters', async () => {
    await run({ retry: true, args: ['m'.repeat(12000)] });
    const [entry] = await server.client().zrange('retry', 0, '-1');
    expect(JSON.parse(entry).error_message).toHaveLength(10000);
  });

  it('remembers a failure it cannot file and files it (interrupted, counting interrupted_count) once it can', async () => {
    const redis = server.client();
    await redis.set('retry', 'not a sorted set');
    const h = await run({ retry: true, args: ['stuck'] }, { orphanCheckInterval: 1 });
    expect(outcomes[0].kind).toBe('interrupted');
    const privateKey = `queue:default|${h.identity.hostname}|${h.identity.pid}|${h.identity.nonce}|0`;
    expect(await redis.llen(privateKey)).toBe(1);
    await redis.del('retry');
    await waitFor(async () => (await redis.zcard('retry')) === 1, { timeout: 15000, what: 'the remembered filing' });
    const [entry, score] = await redis.zrange('retry', 0, '-1', 'WITHSCORES');
    const job = JSON.parse(entry);
    expect(job).toMatchObject({ interrupted_count: 1, retry_count: 0, error_message: 'stuck' });
    expect(Number(score) - Date.now() / 1000).toBeGreaterThan(20);
    expect(await redis.llen(privateKey)).toBe(0);
  });

  it('parks a failure still unfiled at shutdown in wurk:unsettled, never back on its queue; a live process files it', async () => {
    const redis = server.client();
    await redis.set('retry', 'not a sorted set');
    const h = await run({ retry: true, args: ['parked'] });
    expect(outcomes[0].kind).toBe('interrupted');
    await h.stop();
    expect(await redis.llen('queue:default')).toBe(0);
    expect(await redis.keys('queue:default|*')).toEqual([]);
    const [record] = await redis.lrange('wurk:unsettled', 0, -1);
    expect(JSON.parse(record)).toMatchObject({ set: 'retry' });
    expect(JSON.parse(JSON.parse(record).payload)).toMatchObject({
      jid: 'cccccccccccccccccccccccc',
      interrupted_count: 1,
    });
    await redis.del('retry');
    const next = harness([]);
    await next.manager.start();
    await next.manager.ready;
    expect(await redis.llen('wurk:unsettled')).toBe(0);
    const [entry] = await redis.zrange('retry', 0, '-1');
    expect(JSON.parse(entry)).toMatchObject({
      jid: 'cccccccccccccccccccccccc',
      interrupted_count: 1,
      error_message: 'parked',
    });
    expect(h.heartbeat.stopped).toBe(true);
  });

  it('computes the backoff as count**4 + 15 + rand(10) * (count + 1)', () => {
    expect(retryDelaySeconds(0, undefined, () => 0)).toBe(15);
    expect(retryDelaySeconds(2, undefined, () => 0.99)).toBe(31 + 9 * 3);
    expect(retryDelaySeconds(4, 100, () => 0.5)).toBe(100 + 5 * 5);
  });
});
