import { InvalidJobError } from '../../src/job/errors';
import { DEFAULT_JOB_OPTIONS, normalize, payloadFromHash } from '../../src/job/normalize';
import { normalizeToText } from '../../src/job/normalize-text';
import { TimestampMode } from '../../src/job/time';

type Defaults = ReadonlyArray<readonly [string, unknown]>;
const CREATED_MS = 1795933789761.5;

/**
 * The general path's payload text, with `at` left out (the fast path hands it back apart) and the fast path's jid when
 * it minted one.
 */
function generalText(item: Record<string, unknown>, defaults: Defaults, mode: TimestampMode, jid: string): string {
  const payload = normalize(payloadFromHash(item), defaults, mode, CREATED_MS);
  payload.delete('at');
  if (item.jid === undefined) payload.set('jid', jid);
  return payload.toString();
}

function fastPath(
  item: Record<string, unknown>,
  defaults: Defaults = DEFAULT_JOB_OPTIONS,
  mode: TimestampMode = 'seconds',
) {
  const normalized = normalizeToText(item, defaults, mode, CREATED_MS);
  if (normalized === undefined) throw new Error(`normalizeToText declined ${JSON.stringify(item)}`);
  expect(normalized.open + '}').toBe(generalText(item, defaults, mode, normalized.jid));
  return normalized;
}

/** What the general path does with an item the fast path declines: its error, or nothing when it accepts it. */
function generalOutcome(item: unknown, defaults: Defaults): unknown {
  try {
    normalize(payloadFromHash(item as Record<string, unknown>), defaults, 'seconds', CREATED_MS);
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('normalizeToText', () => {
  it("renders normalize's text for a plain push: defaults, the caller's keys, a fresh jid, created_at", () => {
    const normalized = fastPath({ class: 'HardWorker', args: [1, 'é', { b: null }, [1.5]] });
    expect(normalized.open).toBe(
      `{"retry":true,"queue":"default","class":"HardWorker","args":[1,"é",{"b":null},[1.5]],"jid":"${normalized.jid}","created_at":1795933789.7615`,
    );
    expect(normalized.jid).toMatch(/^[0-9a-f]{24}$/);
    expect(normalized).toStrictEqual({
      open: normalized.open,
      jid: normalized.jid,
      className: 'HardWorker',
      queue: 'default',
    });
  });

  it("overrides defaults in place, keeps the caller's jid and created_at, drops client-only keys and undefined values", () => {
    const item = {
      class: 'X',
      args: [],
      tags: ['a'],
      queue: 'low',
      retry: 0,
      jid: 'abc',
      created_at: 1.5,
      retry_for: 60,
      lock: 'until_executed',
      pool: 'p',
      batch_size: 3,
      spread_interval: 10,
      backtrace: undefined,
    };
    const normalized = fastPath(item);
    expect(normalized).toStrictEqual({
      open: '{"retry":0,"queue":"low","class":"X","args":[],"tags":["a"],"jid":"abc","created_at":1.5,"retry_for":60,"lock":"until_executed"',
      jid: 'abc',
      className: 'X',
      queue: 'low',
    });
  });

  it('takes the default when the caller gives a default key as undefined', () => {
    expect(fastPath({ class: 'X', args: [], queue: undefined, jid: 'j' }).open).toBe(
      '{"retry":true,"queue":"default","class":"X","args":[],"jid":"j","created_at":1795933789.7615',
    );
  });

  it('hands a scheduled push its at apart, as given and as text, and leaves it out of the payload', () => {
    const normalized = fastPath({ class: 'X', at: 1795933800.25, args: [2], jid: 'j' });
    expect(normalized).toStrictEqual({
      open: '{"retry":true,"queue":"default","class":"X","args":[2],"jid":"j","created_at":1795933789.7615',
      jid: 'j',
      className: 'X',
      queue: 'default',
      at: 1795933800.25,
      atText: '1795933800.25',
    });
  });

  it('writes created_at as integer milliseconds in millis mode', () => {
    expect(fastPath({ class: 'X', args: [], jid: 'j' }, DEFAULT_JOB_OPTIONS, 'millis').open).toBe(
      '{"retry":true,"queue":"default","class":"X","args":[],"jid":"j","created_at":1795933789761',
    );
  });

  it("opens the object with the caller's first key when there are no defaults", () => {
    const normalized = fastPath({ queue: 'q', class: 'X', args: [], jid: 'j' }, []);
    expect(normalized.open).toBe('{"queue":"q","class":"X","args":[],"jid":"j","created_at":1795933789.7615');
    expect(normalized.queue).toBe('q');
  });

  it("renders a worker's defaults beyond retry and queue, in their order, and checks them like the caller's", () => {
    const defaults = [
      ['retry', 3],
      ['queue', 'mail'],
      ['tags', ['x']],
      ['retry_for', null],
      ['lock', 'until_executed'],
    ] as const;
    const normalized = fastPath({ class: 'X', args: [], jid: 'j', tags: null }, defaults);
    expect(normalized.open).toBe(
      '{"retry":3,"queue":"mail","tags":null,"retry_for":null,"lock":"until_executed","class":"X","args":[],"jid":"j","created_at":1795933789.7615',
    );
    expect(normalized.queue).toBe('mail');
  });

  it('accepts the edges validatePayload accepts', () => {
    for (const item of [
      { retry: false },
      { retry: true },
      { retry: 25 },
      { retry_for: 0 },
      { retry_for: 1e9 },
      { retry_for: null },
      { tags: [] },
      { tags: null },
      { at: 0 },
      { args: [[[[1]]]] },
    ]) {
      expect(
        normalizeToText({ class: 'X', args: [], ...item }, DEFAULT_JOB_OPTIONS, 'seconds', CREATED_MS),
      ).toBeDefined();
      fastPath({ class: 'X', args: [], ...item });
    }
  });

  const sparse = ['a', , 'b'];
  const reshaped = Object.assign(['a'], { toJSON: () => [1] });
  const hollow = Object.assign([], { toJSON: () => undefined });
  const deepArgs = Object.assign([], { toJSON: () => JSON.parse('['.repeat(100) + ']'.repeat(100)) });
  it.each([
    ['class missing', { args: [] }, DEFAULT_JOB_OPTIONS, 'class'],
    ['class empty', { class: '', args: [] }, DEFAULT_JOB_OPTIONS, 'class'],
    ['class not a string', { class: 7, args: [] }, DEFAULT_JOB_OPTIONS, 'class'],
    ['args missing', { class: 'X' }, DEFAULT_JOB_OPTIONS, 'args'],
    ['args a string', { class: 'X', args: '[1]' }, DEFAULT_JOB_OPTIONS, 'args'],
    ['args an object', { class: 'X', args: { a: 1 } }, DEFAULT_JOB_OPTIONS, 'args'],
    ['args rendered past Ruby nesting', { class: 'X', args: deepArgs }, DEFAULT_JOB_OPTIONS, 'args'],
    ['queue empty', { class: 'X', args: [], queue: '' }, DEFAULT_JOB_OPTIONS, 'queue'],
    ['queue empty, no defaults', { class: 'X', args: [], queue: '' }, [], 'queue'],
    ['queue not a string, no defaults', { class: 'X', args: [], queue: 5 }, [], 'queue'],
    ['no queue at all', { class: 'X', args: [] }, [], 'queue'],
    ['default queue empty', { class: 'X', args: [] }, [['queue', '']], 'queue'],
    ['retry negative', { class: 'X', args: [], retry: -1 }, DEFAULT_JOB_OPTIONS, 'retry'],
    ['retry fractional', { class: 'X', args: [], retry: 1.5 }, DEFAULT_JOB_OPTIONS, 'retry'],
    ['retry a string', { class: 'X', args: [], retry: 'yes' }, DEFAULT_JOB_OPTIONS, 'retry'],
    ['retry a string, no defaults', { class: 'X', args: [], queue: 'q', retry: 'yes' }, [], 'retry'],
    [
      'default retry negative',
      { class: 'X', args: [] },
      [
        ['retry', -1],
        ['queue', 'q'],
      ],
      'retry',
    ],
    ['retry_for fractional', { class: 'X', args: [], retry_for: 1.5 }, DEFAULT_JOB_OPTIONS, 'retry_for'],
    ['retry_for negative', { class: 'X', args: [], retry_for: -1 }, DEFAULT_JOB_OPTIONS, 'retry_for'],
    ['retry_for past 1e9', { class: 'X', args: [], retry_for: 1e9 + 1 }, DEFAULT_JOB_OPTIONS, 'retry_for'],
    ['retry_for a string', { class: 'X', args: [], retry_for: '60' }, DEFAULT_JOB_OPTIONS, 'retry_for'],
    ['tags a string', { class: 'X', args: [], tags: 'a' }, DEFAULT_JOB_OPTIONS, 'tags'],
    ['tags with a number', { class: 'X', args: [], tags: ['a', 1] }, DEFAULT_JOB_OPTIONS, 'tags'],
    ['tags with a hole (null in the text)', { class: 'X', args: [], tags: sparse }, DEFAULT_JOB_OPTIONS, 'tags'],
    ['tags whose toJSON writes a number', { class: 'X', args: [], tags: reshaped }, DEFAULT_JOB_OPTIONS, 'tags'],
    ['at a string', { class: 'X', args: [], at: 'soon' }, DEFAULT_JOB_OPTIONS, 'at'],
    ['jid empty', { class: 'X', args: [], jid: '' }, DEFAULT_JOB_OPTIONS, 'jid'],
    ['jid a number', { class: 'X', args: [], jid: 5 }, DEFAULT_JOB_OPTIONS, 'jid'],
  ] as const)('declines what normalize refuses: %s', (_name, item, defaults, field) => {
    expect(normalizeToText(item as Record<string, unknown>, defaults, 'seconds', CREATED_MS)).toBeUndefined();
    const refusal = generalOutcome(item, defaults);
    expect(refusal).toBeInstanceOf(InvalidJobError);
    expect((refusal as InvalidJobError).field).toBe(field);
  });

  it('declines a value JSON.stringify drops, which the general path refuses by name', () => {
    expect(normalizeToText({ class: 'X', args: [], extra: hollow }, DEFAULT_JOB_OPTIONS, 'seconds')).toBeUndefined();
    expect(generalOutcome({ class: 'X', args: [], extra: hollow }, DEFAULT_JOB_OPTIONS)).toEqual(
      new TypeError('extra cannot be encoded as JSON'),
    );
    expect(normalizeToText({ class: 'X', args: [] }, [['retry', () => 1]], 'seconds')).toBeUndefined();
  });

  it.each([
    ['not a hash', null],
    ['an array', []],
  ])('declines a job that is %s', (_name, item) => {
    expect(normalizeToText(item as never, DEFAULT_JOB_OPTIONS, 'seconds')).toBeUndefined();
    expect(generalOutcome(item, DEFAULT_JOB_OPTIONS)).toEqual(
      new InvalidJobError('job', "must be a hash with 'class' and 'args' keys"),
    );
  });

  it('declines an enqueued_at, which normalize would keep in its place and the write would stamp over', () => {
    expect(normalizeToText({ class: 'X', args: [], enqueued_at: 1.5 }, DEFAULT_JOB_OPTIONS, 'seconds')).toBeUndefined();
    expect(generalOutcome({ class: 'X', args: [], enqueued_at: 1.5 }, DEFAULT_JOB_OPTIONS)).toBeUndefined();
  });

  it.each([
    ['class', 'Y'],
    ['args', []],
    ['jid', 'j'],
    ['created_at', 1.5],
    ['enqueued_at', 1.5],
    ['at', 1.5],
  ])('declines a default naming %s, a member normalize places itself', (member, value) => {
    const defaults = [
      ['retry', true],
      ['queue', 'q'],
      [member, value],
    ] as const;
    expect(normalizeToText({ class: 'X', args: [] }, defaults, 'seconds')).toBeUndefined();
    expect(generalOutcome({ class: 'X', args: [] }, defaults)).toBeUndefined();
  });

  it("refuses a value JSON cannot carry with payloadFromHash's error, the first offending key first", () => {
    const item = { class: 'X', args: [1, { when: new Date(0) }], tags: [Symbol('t')] };
    expect(() => normalizeToText(item, DEFAULT_JOB_OPTIONS, 'seconds')).toThrow(
      new InvalidJobError('args[1].when', 'is a Date; job arguments must be plain JSON'),
    );
    expect(generalOutcome(item, DEFAULT_JOB_OPTIONS)).toEqual(
      new InvalidJobError('args[1].when', 'is a Date; job arguments must be plain JSON'),
    );
  });
});
