import Redis from 'ioredis';
import { Client } from '../../src/client/client';
import { InvalidScheduleError } from '../../src/client/schedule-time';
import { InvalidJobError } from '../../src/job/errors';
import { defineWorker } from '../../src/job/worker-definition';
import { PartlyAppliedError } from '../../src/redis/redis-errors';
import { rejectedBy } from '../support/config-error';
import { usePrivateRedis } from '../support/private-redis';

class SlowReport {
  perform(_n: number): void {}
}
defineWorker(SlowReport, { capsule: 'reports' });

class NotAWorker {}

/** The InvalidJobError a push rejects with; anything else fails the test. */
async function refusal(push: () => Promise<unknown>): Promise<InvalidJobError> {
  const error = await push().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (error instanceof InvalidJobError) return error;
  throw new Error(`expected an InvalidJobError, got ${String(error)}`);
}

describe('Client rules against a real redis-server', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let connection: Redis;
  let client: Client;

  beforeAll(() => {
    connection = server.client();
    client = new Client(connection, { timestamps: 'seconds' });
  });

  describe('one jid rule and one queue rule on every push path, refused before Redis, naming the field', () => {
    const HOSTILE_JIDS = ['../queues/default/pause#', '../dead', '..', 'a b', 'x'.repeat(256), '', 'é'];
    const BAD_QUEUES = [
      'a b',
      'tab\t',
      'nl\n',
      '.',
      '..',
      'x'.repeat(256),
      '😀'.repeat(256),
      'nbsp\u00a0',
      'del\u007f',
      '\ud800',
    ];
    afterEach(async () => {
      expect(await server.redis.dbsize()).toBe(0);
    });

    it('jid: push (both paths), pushBulk', async () => {
      const withMiddleware = new Client(connection, { timestamps: 'seconds' });
      withMiddleware.use((_context, next) => next());
      for (const jid of HOSTILE_JIDS) {
        for (const push of [
          () => client.push({ class: 'A', args: [], jid }),
          () => withMiddleware.push({ class: 'A', args: [], jid }),
          () => client.push({ class: 'A', args: [], jid, at: Date.now() / 1000 + 60 }),
          () => client.pushBulk({ class: 'A', args: [[1]], jid }),
        ]) {
          const error = await refusal(push);
          expect([error.field, error.reason]).toEqual([
            'jid',
            jid === '' ? 'must be a non-empty string' : 'must be 1 to 255 characters of A-Z, a-z, 0-9, _ and -',
          ]);
        }
      }
    });

    it('queue: push (both paths), pushBulk, performAsync / performIn / performAt with a queue override', async () => {
      const withMiddleware = new Client(connection, { timestamps: 'seconds' });
      withMiddleware.use((_context, next) => next());
      for (const queue of BAD_QUEUES) {
        for (const push of [
          () => client.push({ class: 'A', args: [], queue }),
          () => withMiddleware.push({ class: 'A', args: [], queue }),
          () => client.pushBulk({ class: 'A', args: [[1], [2]], queue }),
          () => client.set({ queue }).performAsync(SlowReport, 1),
          () => withMiddleware.set({ queue }).performIn(60, SlowReport, 1),
          () => client.set({ queue }).performAt(Date.now() / 1000 + 60, SlowReport, 1),
        ]) {
          const error = await refusal(push);
          expect([error.field, error.reason]).toEqual([
            'queue',
            'must be 1 to 255 characters without whitespace or control characters, and not . or ..',
          ]);
        }
      }
    });

    it('retry_queue, where a failed job goes next: push (both paths), pushBulk, a scheduled push, set() options', async () => {
      const withMiddleware = new Client(connection, { timestamps: 'seconds' });
      withMiddleware.use((_context, next) => next());
      for (const retry_queue of [...BAD_QUEUES, '', 5, false]) {
        for (const push of [
          () => client.push({ class: 'A', args: [], retry_queue } as never),
          () => withMiddleware.push({ class: 'A', args: [], retry_queue } as never),
          () => client.push({ class: 'A', args: [], retry_queue, at: Date.now() / 1000 + 60 } as never),
          () => client.pushBulk({ class: 'A', args: [[1], [2]], retry_queue } as never),
          () => client.set({ retry_queue, queue: 'default' } as never).performAsync(SlowReport, 1),
        ]) {
          const error = await refusal(push);
          expect([error.field, error.reason]).toEqual([
            'retry_queue',
            'must be 1 to 255 characters without whitespace or control characters, and not . or .. (or null)',
          ]);
        }
      }
    });
  });

  it('a client middleware that renames the queue or the jid after normalize is refused too, before Redis', async () => {
    for (const [field, value] of [
      ['queue', '..'],
      ['jid', '../dead/run-all#'],
    ] as const) {
      const renaming = new Client(connection, { timestamps: 'seconds' });
      renaming.use((context, next) => (context.job.set(field, value), next()));
      expect((await refusal(() => renaming.push({ class: 'A', args: [] }))).field).toBe(field);
      expect((await refusal(() => renaming.pushBulk({ class: 'A', args: [[1], [2]] }))).field).toBe(field);
    }
    expect(await server.redis.dbsize()).toBe(0);
  });

  it('accepts what Sidekiq accepts within the rule: 255 code points of any script, punctuation, a jid of 255 of [A-Za-z0-9_-]', async () => {
    for (const queue of ['reports·eu', '😀'.repeat(255), 'a.b', '~x', '../x', 'x'.repeat(255)]) {
      await client.push({ class: 'A', args: [], queue, retry_queue: queue });
      expect(await server.redis.llen(`queue:${queue}`)).toBe(1);
    }
    // null, as Ruby writes it when no retry queue is set: retries go back to the job's own queue.
    await client.push({ class: 'A', args: [], retry_queue: null } as never);
    expect(await client.push({ class: 'A', args: [], jid: `a-Z_9${'x'.repeat(250)}` })).toHaveLength(255);
  });

  describe('pushBulk refuses bad input before writing anything, naming the field', () => {
    afterEach(async () => {
      expect(await server.redis.dbsize()).toBe(0);
    });

    it('args', async () => {
      for (const args of [undefined, 'x', { a: 1 }]) {
        const error = await refusal(() => client.pushBulk({ class: 'B', args } as never));
        expect(error.message).toBe('args must be an array of arrays: [[1], [2]]');
      }
    });

    it('jid with more than one job', async () => {
      expect((await refusal(() => client.pushBulk({ class: 'B', args: [[1], [2]], jid: 'a' }))).message).toBe(
        'jid may only be given when pushing a single job',
      );
    });

    it('batch_size', async () => {
      for (const size of [0, -1, 1.5, '2']) {
        expect(
          (await refusal(() => client.pushBulk({ class: 'B', args: [[1]], batch_size: size } as never))).message,
        ).toBe('batch_size must be a positive integer');
      }
    });

    it('spread_interval', async () => {
      expect(
        (await refusal(() => client.pushBulk({ class: 'B', args: [[1]], spread_interval: 10, at: 1 } as never)))
          .message,
      ).toBe('spread_interval cannot be combined with at');
      for (const spread of [4.9, '10', -10, 1e308, 315_576_001]) {
        const error = await refusal(() =>
          client.pushBulk({ class: 'B', args: [[1]], spread_interval: spread } as never),
        );
        expect(error).toBeInstanceOf(InvalidScheduleError);
        expect(error.field).toBe('spread_interval');
        expect(error.message).toBe(
          `spread_interval must be a number of seconds from 5 to 315576000 (ten years) (got ${String(spread)})`,
        );
      }
    });

    it('at', async () => {
      for (const at of ['soon', [1], [1, 2, 3]]) {
        const error = await refusal(() => client.pushBulk({ class: 'B', args: [[1], [2]], at } as never));
        expect(error.message).toBe('at must be a number or an array of numbers as long as args');
      }
      const error = await refusal(() =>
        client.pushBulk({ class: 'B', args: [[1], [2]], at: [1_900_000_000, 'soon'] } as never),
      );
      expect(error.field).toBe('at[1]');
      expect(error.message).toBe('at[1] must be a Date or epoch seconds (got soon)');
    });

    it('at in milliseconds or past ten years, as performAt refuses it', async () => {
      const now = Date.now() / 1000;
      const millis = await refusal(() => client.pushBulk({ class: 'B', args: [[1], [2]], at: (now + 60) * 1000 }));
      expect(millis).toBeInstanceOf(InvalidScheduleError);
      expect(millis.field).toBe('at');
      expect(millis.message).toMatch(/^at is \d+(\.\d+)?, an epoch in milliseconds/);
      const far = await refusal(() =>
        client.pushBulk({ class: 'B', args: [[1], [2]], at: [now + 60, now + 11 * 365 * 86_400] }),
      );
      expect(far.field).toBe('at[1]');
      expect(far.message).toMatch(/^at\[1\] is more than ten years away/);
    });
  });

  describe('push refuses a raw at past the ten-year horizon, as performAt does (nothing is stored at a score no poller reaches)', () => {
    afterEach(async () => {
      expect(await server.redis.dbsize()).toBe(0);
    });

    it('a far epoch, 1e308 and a millisecond epoch, on the plain path and through middleware', async () => {
      const now = Date.now() / 1000;
      const withMiddleware = new Client(connection, { timestamps: 'seconds' });
      withMiddleware.use((_context, next) => next());
      for (const pusher of [client, withMiddleware]) {
        for (const at of [now + 11 * 365 * 86_400, 1e308]) {
          const error = await refusal(() => pusher.push({ class: 'B', args: [], at }));
          expect(error).toBeInstanceOf(InvalidScheduleError);
          expect(error.field).toBe('at');
          expect(error.message).toMatch(/^at is more than ten years away/);
        }
        const millis = await refusal(() => pusher.push({ class: 'B', args: [], at: Date.now() + 60_000 }));
        expect(millis).toBeInstanceOf(InvalidScheduleError);
        expect(millis.message).toMatch(/^at is \d+(\.\d+)?, an epoch in milliseconds/);
      }
    });
  });

  it('push takes an at just inside the horizon, and any at in the past (due at once)', async () => {
    const now = Date.now() / 1000;
    await client.push({ class: 'B', args: [1], at: now + 10 * 365 * 86_400 - 60 });
    await client.push({ class: 'B', args: [2], at: -1e308 });
    expect(await server.redis.zcard('schedule')).toBe(2);
  });

  describe('pushBulk scheduling', () => {
    const scores = async () =>
      (await server.redis.zrange('schedule', 0, '-1', 'WITHSCORES')).filter((_, i) => i % 2 === 1).map(Number);

    it('schedules every job at one time given as a number', async () => {
      await client.pushBulk({ class: 'B', args: [[1], [2]], at: 1_900_000_000.5 });
      expect(await scores()).toEqual([1_900_000_000.5, 1_900_000_000.5]);
    });

    it('spreads jobs over spread_interval seconds from now (5 s allowed)', async () => {
      const before = Date.now() / 1000;
      await client.pushBulk({ class: 'B', args: Array.from({ length: 20 }, (_, i) => [i]), spread_interval: 10 });
      const after = Date.now() / 1000;
      const times = await scores();
      expect(times).toHaveLength(20);
      for (const time of times) {
        expect(time).toBeGreaterThanOrEqual(before - 0.001);
        expect(time).toBeLessThanOrEqual(after + 10);
      }
      // Spread, not bunched at now: 20 uniform draws all within the first 2 s of 10 has odds of 0.2^20.
      expect(Math.max(...times) - before).toBeGreaterThan(2);
      await client.pushBulk({ class: 'B', args: [[1]], spread_interval: 5 });
      expect(await server.redis.zcard('schedule')).toBe(21);
    });
  });

  describe('pushBulk failures tell whether any of its jobs was written', () => {
    /** A client whose middleware makes queue:default refuse LPUSH just before job `poisoned` is written. */
    const poisoning = (poisoned: number, halt: number[] = []) => {
      const poisoner = new Client(connection, { timestamps: 'seconds' });
      poisoner.use(async ({ job }, next) => {
        if (halt.includes(job.args[0] as number)) return;
        if (job.args[0] === poisoned) await server.redis.set('queue:default', 'not a list');
        await next();
      });
      return poisoner;
    };

    it("wraps a later batch's plain refusal in a PartlyAppliedError once an earlier batch is in", async () => {
      const failure = await poisoning(2)
        .pushBulk({ class: 'B', args: [[1], [2]], batch_size: 1 })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(PartlyAppliedError);
      expect((failure as Error).message).toMatch(/^failed after some of its writes were applied: WRONGTYPE/);
    });

    it('is the plain refusal when the batches before it wrote nothing (every job halted)', async () => {
      const failure = await poisoning(2, [1])
        .pushBulk({ class: 'B', args: [[1], [2]], batch_size: 1 })
        .catch((error: unknown) => error);
      expect(failure).not.toBeInstanceOf(PartlyAppliedError);
      expect(String(failure)).toMatch(/WRONGTYPE/);
    });

    it('passes a PartlyAppliedError of a later batch on as it is, not wrapped twice', async () => {
      const hooked = new Client(connection, { timestamps: 'seconds' });
      hooked.addPipelineHook((pipeline, job) => {
        if (job.args[0] === 2) pipeline.hset('a-string', 'f', 'v');
      });
      await server.redis.set('a-string', 'x');
      const failure = await hooked
        .pushBulk({ class: 'X', args: [[1], [2]], batch_size: 1 })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(PartlyAppliedError);
      expect((failure as Error).message).toMatch(/^failed after some of its writes were applied: WRONGTYPE/);
    });
  });

  it("hands the transport a scheduled job's score as float seconds text, keeping a float at as given", async () => {
    const scores: string[] = [];
    const capturing = new Client(
      { write: async (_immediate, scheduled) => void scores.push(...scheduled.map(({ score }) => score)) },
      { timestamps: 'seconds' },
    );
    await capturing.push({ class: 'X', args: [], at: 1_900_000_000 });
    await capturing.push({ class: 'X', args: [], at: 1_900_000_000.25 });
    expect(scores).toEqual(['1900000000.0', '1900000000.25']);
  });

  it('takes enqueued_at off a scheduled job however it was given', async () => {
    const tagging = new Client(connection, { timestamps: 'seconds' });
    tagging.use(async (_ctx, next) => next());
    await tagging.push({ class: 'X', args: [], at: 1_900_000_000, enqueued_at: 1_800_000_000 } as never);
    const [member] = await server.redis.zrange('schedule', 0, '-1');
    expect(JSON.parse(member)).not.toHaveProperty('enqueued_at');
    expect(JSON.parse(member)).not.toHaveProperty('at');
  });

  it('tells push observers the class, queue and count of every accepted push, a bulk batch at once', async () => {
    const heard: Array<[string, string, number]> = [];
    const observed = new Client(connection, { timestamps: 'seconds', capsuleQueues: { reports: 'reports-q' } });
    observed.onPushed((className, queue, count) => heard.push([className, queue, count]));
    await observed.push({ class: 'Plain', args: [] });
    await observed.performAsync(SlowReport, 1);
    await observed.performIn(60, SlowReport, 2);
    await observed.pushBulk({ class: 'Bulk', args: [[1], [2], [3]], batch_size: 2, queue: 'b' });
    observed.use(async (_ctx, next) => next());
    await observed.push({ class: 'Mid', args: [] });
    await observed.pushBulk({ class: 'Slow', args: [[1], [2]], batch_size: 2 });
    expect(heard).toEqual([
      ['Plain', 'default', 1],
      ['SlowReport', 'reports-q', 1],
      ['SlowReport', 'reports-q', 1],
      ['Bulk', 'b', 2],
      ['Bulk', 'b', 1],
      ['Mid', 'default', 1],
      ['Slow', 'default', 1],
      ['Slow', 'default', 1],
    ]);
  });

  it('refuses a worker naming a capsule the app does not have, listing the ones it has', async () => {
    const withCapsules = new Client(connection, {
      timestamps: 'seconds',
      capsuleQueues: { fast: 'fast-q', slow: 'slow-q' },
    });
    const unknown = await rejectedBy(InvalidJobError, () => withCapsules.performAsync(SlowReport, 1));
    expect(unknown.field).toBe('capsule');
    expect(unknown.message).toBe(
      'capsule "reports" is not a capsule of this app\'s capsules option (fast, slow); name the queue instead, or configure the capsule',
    );
    const none = await rejectedBy(InvalidJobError, () => client.performAsync(SlowReport, 1));
    expect(none.message).toBe(
      'capsule "reports" is not a capsule of this app\'s capsules option (none configured); name the queue instead, or configure the capsule',
    );
  });

  it('refuses a class that is not a @Worker, naming it, by a rejected promise (not a throw)', async () => {
    const error = await rejectedBy(InvalidJobError, () => client.performAsync(NotAWorker as never));
    expect(error.field).toBe('worker');
    expect(error.message).toBe('worker NotAWorker is not a @Worker class');
    expect((await rejectedBy(InvalidJobError, () => client.performAsync(undefined as never))).message).toBe(
      'worker undefined is not a @Worker class',
    );
  });
});
