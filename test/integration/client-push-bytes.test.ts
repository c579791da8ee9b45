import Redis from 'ioredis';
import { Client } from '../../src/client/client';
import { JobHash } from '../../src/job/job-hash';
import { JobPayload } from '../../src/job/payload';
import { TimestampMode } from '../../src/job/time';
import { defineWorker, WorkerClass } from '../../src/job/worker-definition';
import { usePrivateRedis } from '../support/private-redis';

class PlainWorker {
  perform(..._args: unknown[]): void {}
}
defineWorker(PlainWorker, {});

class OptionedWorker {
  perform(..._args: unknown[]): void {}
}
defineWorker(OptionedWorker, {
  name: 'Ruby::Optioned',
  queue: 'critical',
  retry: 3,
  backtrace: 5,
  tags: ['billing', 'ünïcode'],
  retry_for: 3600,
  retry_queue: 'slow',
  dead: false,
  uniqueFor: 60,
  custom: { lock: 'until_executed', nested: { a: [1, 2.5, null] } },
});

/** A day ahead (within the ten years performAt takes), in whole seconds and with a fraction. */
const FUTURE = Math.floor(Date.now() / 1000) + 86400;
const FUTURE_FRACTION = FUTURE + 0.25;

/** One push, as a test case: how it is made, and whether a plain client renders it straight to text. */
interface Case {
  name: string;
  push(client: Client): Promise<string | null>;
  fast: boolean;
}

const hashCases: Array<[string, JobHash, boolean]> = [
  ['minimal', { class: 'Ruby::Worker', args: [] }, true],
  ['mixed args', { class: 'Ruby::Worker', args: [1, 'two', { three: 3 }, [null, true, -0, 1.5e300, 0.1]] }, true],
  [
    'unicode',
    {
      class: 'Ünïcode::Wörker',
      args: ['héllo', '日本語', '😀', '\u2028\u2029', '\ud800', 'quote " backslash \\ tab \t nul \u0000'],
    },
    true,
  ],
  [
    'custom fields in caller order',
    { args: [1], zebra: { deep: [1, { x: 'y' }] }, class: 'X', alpha: null, '10': 'integer-like key', empty: '' },
    true,
  ],
  ['retry 0, queue override, tags', { class: 'X', args: [], retry: 0, queue: 'low', tags: ['a', 'b'] }, true],
  [
    'retry false, retry_for, backtrace',
    { class: 'X', args: [], retry: false, retry_for: 60, backtrace: true, retry_queue: 'r' },
    true,
  ],
  ['retry N before queue in the hash', { queue: 'q', class: 'X', retry: 7, args: ['x'] }, true],
  ['explicit jid and created_at', { class: 'X', args: [], jid: 'explicit-jid', created_at: 1700000000.0 }, true],
  ['client-only keys dropped', { class: 'X', args: [], pool: 'p', batch_size: 10, spread_interval: 30 }, true],
  ['undefined members skipped', { class: 'X', args: [], tags: undefined, queue: undefined }, true],
  ['scheduled at a whole second', { class: 'X', args: [1], at: FUTURE }, true],
  ['scheduled at a fraction', { class: 'X', args: [1], at: FUTURE_FRACTION, queue: 'later' }, true],
  ['scheduled in the past (still the schedule set)', { class: 'X', args: [1], at: 1000 }, true],
  ['enqueued_at given (stamped over in place)', { class: 'X', args: [], enqueued_at: 5, retry: 1 }, false],
  ['enqueued_at given while scheduled', { class: 'X', args: [], enqueued_at: 5, at: FUTURE }, false],
];

const cases: Case[] = [
  ...hashCases.map(([name, hash, fast]) => ({
    name: `push: ${name}`,
    push: (client: Client) => client.push(hash),
    fast,
  })),
  {
    name: "push: a JobPayload keeps its members' text (Ruby floats, big integers, escapes)",
    push: (client) =>
      client.push(
        JobPayload.parse('{"class":"RubyJob","args":[1.0,12345678901234567890,"\\u00e9"],"queue":"q","custom":2.50}'),
      ),
    fast: false,
  },
  {
    name: 'performAsync: no options',
    push: (client) => client.performAsync(PlainWorker as WorkerClass, 1, 'a'),
    fast: true,
  },
  {
    name: 'performAsync: every option',
    push: (client) => client.performAsync(OptionedWorker as WorkerClass, { k: 'v' }, [1.25]),
    fast: true,
  },
  {
    name: 'set(): queue, retry, custom overrides',
    push: (client) =>
      client
        .set({ queue: 'other', retry: false, custom: { lock: 'x', extra: 'é' } })
        .performAsync(OptionedWorker as WorkerClass, 'a'),
    fast: true,
  },
  {
    name: 'performAt: whole epoch seconds',
    push: (client) => client.performAt(FUTURE, OptionedWorker as WorkerClass, 'later'),
    fast: true,
  },
  {
    name: 'performAt: a Date with milliseconds',
    push: (client) => client.performAt(new Date(FUTURE_FRACTION * 1000), PlainWorker as WorkerClass),
    fast: true,
  },
  {
    name: 'performAt: a time already come (its queue)',
    push: (client) => client.performAt(1000, PlainWorker as WorkerClass, 'now'),
    fast: true,
  },
];

/** Generated values differ between two pushes; everything else, each byte, must not. */
function masked(text: string, mode: TimestampMode): string {
  const stamp = mode === 'seconds' ? '\\d+\\.\\d+' : '\\d+';
  return text
    .replace(/"jid":"[0-9a-f]{24}"/, '"jid":"<jid>"')
    .replace(new RegExp(`"created_at":${stamp}(?=[,}])`), '"created_at":<t>')
    .replace(new RegExp(`"enqueued_at":${stamp}(?=[,}])`), '"enqueued_at":<t>');
}

describe('a single push renders the same bytes on its fast path as through JobPayload', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let connection: Redis;

  beforeAll(() => {
    connection = server.client();
  });

  /** Everything the push left in Redis: the queue registry, each queue's jobs, the schedule with scores. */
  async function stored(mode: TimestampMode): Promise<unknown> {
    const queues = (await server.redis.smembers('queues')).sort();
    const lists = await Promise.all(
      queues.map(async (queue) => [
        queue,
        (await server.redis.lrange(`queue:${queue}`, 0, -1)).map((text) => masked(text, mode)),
      ]),
    );
    const schedule = await server.redis.zrange('schedule', 0, '-1', 'WITHSCORES');
    return { queues, lists, schedule: schedule.map((text, index) => (index % 2 === 0 ? masked(text, mode) : text)) };
  }

  async function outcome(client: Client, push: Case['push'], mode: TimestampMode): Promise<unknown> {
    await server.redis.flushall();
    const result = await push(client).then(
      (jid) => ({ jid: typeof jid === 'string' && /^[0-9a-f]{24}$/.test(jid) ? '<jid>' : jid }),
      (error: Error) => ({ error: `${error.name}: ${error.message}` }),
    );
    return { result, stored: await stored(mode) };
  }

  for (const mode of ['seconds', 'millis'] as const) {
    describe(`${mode} timestamps`, () => {
      let plain: Client;
      let throughPayload: Client;
      let throughPipeline: Client;

      beforeAll(() => {
        plain = new Client(connection, { timestamps: mode });
        // A middleware that only passes the job on: the push goes through JobPayload, then the transport's single-job
        // send.
        throughPayload = new Client(connection, { timestamps: mode }).use((_context, next) => next());
        // A hook that appends nothing: the transport's general pipeline.
        throughPipeline = new Client(connection, { timestamps: mode });
        throughPipeline.addPipelineHook(() => undefined);
      });

      it.each(cases.map((entry) => [entry.name, entry] as const))('%s', async (_name, { push, fast }) => {
        const rendered = jest.spyOn(plain, 'pushText');
        const fromPlain = await outcome(plain, push, mode);
        expect(rendered).toHaveBeenCalledTimes(fast ? 1 : 0);
        rendered.mockRestore();
        expect(fromPlain).toMatchObject({ result: { jid: expect.anything() } });
        expect(await outcome(throughPayload, push, mode)).toEqual(fromPlain);
        expect(await outcome(throughPipeline, push, mode)).toEqual(fromPlain);
      });
    });
  }

  const refused: Array<[string, unknown]> = [
    ['not a hash', ['X']],
    ['no class', { args: [] }],
    ['empty class', { class: '', args: [] }],
    ['args not an array', { class: 'X', args: 'nope' }],
    ['no args', { class: 'X' }],
    ['args too deep', { class: 'X', args: JSON.parse('['.repeat(100) + ']'.repeat(100)) }],
    ['empty queue', { class: 'X', args: [], queue: '' }],
    ['queue not a string', { class: 'X', args: [], queue: 5 }],
    ['empty jid', { class: 'X', args: [], jid: '' }],
    ['jid null', { class: 'X', args: [], jid: null }],
    ['retry negative', { class: 'X', args: [], retry: -1 }],
    ['retry a string', { class: 'X', args: [], retry: 'yes' }],
    ['retry fractional', { class: 'X', args: [], retry: 1.5 }],
    ['at a string', { class: 'X', args: [], at: 'soon' }],
    ['at null', { class: 'X', args: [], at: null }],
    ['retry_for too big', { class: 'X', args: [], retry_for: 2e9 }],
    ['tags not strings', { class: 'X', args: [], tags: [1] }],
    ['tags a string', { class: 'X', args: [], tags: 'a' }],
    // An array with a hole is written as null there, which is what normalize checks.
    ['tags with a hole', { class: 'X', args: [], tags: ['a', , 'b'] }],
    ['a Date argument', { class: 'X', args: [new Date(0)] }],
    ['NaN in args', { class: 'X', args: [NaN] }],
    ['a function member', { class: 'X', args: [], hook: () => 1 }],
  ];

  it.each(refused)('refuses %s with the same error on both paths, writing nothing', async (_name, hash) => {
    const plain = new Client(connection, { timestamps: 'seconds' });
    const throughPayload = new Client(connection, { timestamps: 'seconds' }).use((_context, next) => next());
    const fromPlain = await outcome(plain, (client) => client.push(hash as JobHash), 'seconds');
    expect(fromPlain).toMatchObject({ result: { error: expect.any(String) }, stored: { queues: [], schedule: [] } });
    expect(await outcome(throughPayload, (client) => client.push(hash as JobHash), 'seconds')).toEqual(fromPlain);
  });
});
