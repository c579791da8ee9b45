import { InvalidJobError } from '../../src/job/errors';
import { assertJsonNative } from '../../src/job/json-native';
import { DEFAULT_JOB_OPTIONS, normalize, payloadFromHash, validatePayload } from '../../src/job/normalize';
import { JobPayload } from '../../src/job/payload';
import { floatText, nowMs, scoreText, timestampText, toEpochSeconds } from '../../src/job/time';

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

describe('normalize', () => {
  it('orders keys as Sidekiq does: defaults, caller keys, jid, created_at', () => {
    const payload = normalize(
      payloadFromHash({ class: 'HardWorker', args: [1], tags: ['a'] }),
      DEFAULT_JOB_OPTIONS,
      'seconds',
      1795933789761.5,
    );
    expect(payload.keys()).toEqual(['retry', 'queue', 'class', 'args', 'tags', 'jid', 'created_at']);
    expect(payload.get('retry')).toBe(true);
    expect(payload.queue).toBe('default');
    expect(payload.jid).toMatch(/^[0-9a-f]{24}$/);
    expect(payload.getRaw('created_at')).toBe('1795933789.7615');
  });

  it('lets the caller override a default in place and keeps an explicit jid and created_at', () => {
    const payload = normalize(
      payloadFromHash({ class: 'X', args: [], queue: 'low', retry: 0, jid: 'abc', created_at: 1.5 }),
      DEFAULT_JOB_OPTIONS,
      'seconds',
    );
    expect(payload.toString()).toBe('{"retry":0,"queue":"low","class":"X","args":[],"jid":"abc","created_at":1.5}');
  });

  it.each([
    [{ args: [] }, 'class'],
    [{ class: '', args: [] }, 'class'],
    [{ class: 'X', args: 'nope' }, 'args'],
    [{ class: 'X' }, 'args'],
    [{ class: 'X', args: [], queue: '' }, 'queue'],
    [{ class: 'X', args: [], retry: 'yes' }, 'retry'],
    [{ class: 'X', args: [], retry: -1 }, 'retry'],
    [{ class: 'X', args: [], at: 'soon' }, 'at'],
    [{ class: 'X', args: [], tags: 'a' }, 'tags'],
    [{ class: 'X', args: [], retry_for: 1.5 }, 'retry_for'],
  ])('refuses %j naming %s', (item, field) => {
    const attempt = () => normalize(payloadFromHash(item as never), DEFAULT_JOB_OPTIONS, 'seconds');
    expect(attempt).toThrow(InvalidJobError);
    try {
      attempt();
    } catch (error) {
      expect((error as InvalidJobError).field).toBe(field);
    }
  });
});

describe('payload validation', () => {
  const valid = (members: string) => () =>
    validatePayload(JobPayload.parse(`{"class":"X","queue":"q","args":[],${members}}`));
  const deepArgs = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

  it("refuses stored args nested past Ruby's limit, which arrive as text and skip the argument check", () => {
    // payload (1) + 99 arrays = 100 levels.
    expect(() => validatePayload(JobPayload.parse(`{"class":"X","queue":"q","args":${deepArgs(99)}}`))).not.toThrow();
    expect(() => validatePayload(JobPayload.parse(`{"class":"X","queue":"q","args":${deepArgs(100)}}`))).toThrow(
      new InvalidJobError('args', "nests deeper than 100 levels, which Ruby's JSON parser refuses"),
    );
  });

  it('takes retry_for as whole seconds from 0 to 1e9, and null as absent', () => {
    for (const ok of ['0', '1000000000', 'null']) expect(valid(`"retry_for":${ok}`)).not.toThrow();
    for (const bad of ['-1', '1000000001', '1.5', '"60"']) {
      expect(valid(`"retry_for":${bad}`)).toThrow(
        new InvalidJobError('retry_for', 'must be a whole number of seconds (relative, below 1e9)'),
      );
    }
  });

  it('takes tags as an array of strings, and null as absent', () => {
    expect(valid('"tags":["a"]')).not.toThrow();
    expect(valid('"tags":null')).not.toThrow();
    expect(valid('"tags":["a",1]')).toThrow(new InvalidJobError('tags', 'must be an array of strings'));
  });

  it('refuses an at a middleware set to a number JSON cannot write', () => {
    for (const at of [Infinity, NaN]) {
      const payload = JobPayload.fromEntries([
        ['class', 'X'],
        ['queue', 'q'],
        ['args', []],
      ]).set('at', at);
      expect(() => validatePayload(payload)).toThrow(new InvalidJobError('at', 'must be a number of epoch seconds'));
    }
    expect(valid('"at":1795933800.5')).not.toThrow();
  });

  it('checks a jid only when the payload has one', () => {
    expect(() => validatePayload(JobPayload.parse('{"class":"X","queue":"q","args":[]}'))).not.toThrow();
    expect(valid('"jid":""')).toThrow(new InvalidJobError('jid', 'must be a non-empty string'));
  });

  it('refuses a job that is not a hash', () => {
    for (const item of [null, [], 'X']) {
      expect(() => payloadFromHash(item as never)).toThrow(
        new InvalidJobError('job', "must be a hash with 'class' and 'args' keys"),
      );
    }
  });
});

describe('JSON-native arguments', () => {
  class Money {
    cents = 1;
  }
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;

  it.each([
    [[1, { when: new Date() }], 'args[1].when is a Date'],
    [[undefined], 'args[0] is undefined'],
    [[() => 1], 'args[0] is a function'],
    [[new Map()], 'args[0] is a Map'],
    [[new Set()], 'args[0] is a Set'],
    [[10n], 'args[0] is a BigInt'],
    [[Symbol('s')], 'args[0] is a Symbol'],
    [[new (class {})()], 'args[0] is an instance of a class'],
    [[Object.create(Object.create(null))], 'args[0] is an instance of a class'],
    [[NaN], 'args[0] is NaN'],
    [[{ x: Infinity }], 'args[0].x is Infinity'],
    [[new Money()], 'args[0] is an instance of Money'],
    [[cyclic], 'args[0].self is a circular reference'],
    [[{ 'a b': new Date() }], 'args[0]["a b"] is a Date'],
    [[{ '1a': new Date() }], 'args[0]["1a"] is a Date'],
    [[{ 'a-b': new Date() }], 'args[0]["a-b"] is a Date'],
    [[{ $x: { _y: { z9: new Date() } } }], 'args[0].$x._y.z9 is a Date'],
    [[{ a: [1, -Infinity] }], 'args[0].a[1] is -Infinity'],
  ])('refuses %p with "%s"', (args, message) => {
    expect(() => assertJsonNative(args, 'args', 2)).toThrow(message);
  });

  it("accepts nesting up to Ruby's 100 levels and refuses one more", () => {
    // payload (1) + args (2) + 98 arrays = 100 levels.
    expect(() => payloadFromHash({ class: 'X', args: [nested(98)] })).not.toThrow();
    expect(() => payloadFromHash({ class: 'X', args: [nested(99)] })).toThrow(/nests deeper than 100/);
  });

  it('accepts the same object twice side by side, which is no cycle', () => {
    const shared = { a: [1] };
    expect(() => assertJsonNative([shared, shared, { again: shared }], 'args', 2)).not.toThrow();
  });

  it('accepts plain JSON values, null-prototype objects included', () => {
    const bare = Object.assign(Object.create(null), { a: 1 });
    expect(() => assertJsonNative([1, 'é', null, true, [{ a: [1.5] }], bare], 'args', 2)).not.toThrow();
  });
});

describe('time', () => {
  it('always writes seconds with a fraction so Sidekiq 8 never reads milliseconds', () => {
    expect(floatText(1700000000)).toBe('1700000000.0');
    expect(timestampText(1700000000000, 'seconds')).toBe('1700000000.0');
    expect(timestampText(1700000000123.7, 'seconds')).toBe('1700000000.1237');
    expect(timestampText(1700000000123.7, 'millis')).toBe('1700000000123');
  });

  it('reads both dialects by magnitude', () => {
    expect(toEpochSeconds(1700000000.5)).toBe(1700000000.5);
    expect(toEpochSeconds(1700000000500)).toBe(1700000000.5);
    expect(toEpochSeconds('x')).toBeUndefined();
    // 1e11 is the first value read as milliseconds (March 1973), the last one below it stays seconds (year 5138).
    expect(toEpochSeconds(1e11)).toBe(1e8);
    expect(toEpochSeconds(1e11 - 1)).toBe(1e11 - 1);
    for (const bad of [NaN, Infinity, -Infinity, null, undefined]) expect(toEpochSeconds(bad)).toBeUndefined();
  });

  it('writes sorted-set scores as float seconds whatever the payload dialect', () => {
    expect(scoreText(1700000000000)).toBe('1700000000.0');
    expect(scoreText(1700000000123.5)).toBe('1700000000.1235');
  });

  it('reads the clock in epoch milliseconds with a fraction', () => {
    const before = Date.now();
    const now = nowMs();
    expect(now).toBeGreaterThanOrEqual(before - 1);
    expect(now).toBeLessThanOrEqual(Date.now() + 1);
  });
});
