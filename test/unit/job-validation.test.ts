import { problemOf } from '../support/api-problem';
import type { Principal } from '../../src/api/auth';
import { JobPayload } from '../../src/job/payload';
import { freshEachTest } from '../support/fresh-module';

type Validation = typeof import('../../src/api/job-validation');
// The key sets, patterns, limits and the UTF-8 decoder are built at import: loaded per test so each test covers them.
const fresh = freshEachTest(() => require('../../src/api/job-validation') as Validation);
const parseJobBody: Validation['parseJobBody'] = (...args) => fresh.module.parseJobBody(...args);
const validJid: Validation['validJid'] = (...args) => fresh.module.validJid(...args);
const checkClassAllowed: Validation['checkClassAllowed'] = (...args) => fresh.module.checkClassAllowed(...args);
const checkArgsSize: Validation['checkArgsSize'] = (...args) => fresh.module.checkArgsSize(...args);
const checkTrack: Validation['checkTrack'] = (...args) => fresh.module.checkTrack(...args);
const checkStorableNumbers: Validation['checkStorableNumbers'] = (...args) =>
  fresh.module.checkStorableNumbers(...args);

/** The HTTP API's checks of a job body (docs/internals/spec/contract.md §1.7, steps 3–8), on the bytes as sent. */
describe('api: job body validation', () => {
  const body = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
  const invalid = (detail: string, extensions: Record<string, unknown> = {}) => ({
    type: 'invalid_request',
    status: 400,
    detail,
    extensions,
    headers: {},
  });

  describe('parseJobBody', () => {
    it('keeps the body as sent: member order and number texts', () => {
      const payload = parseJobBody(body('{"args":[1.0,2e3],"class":"Billing::Invoice","queue":"low"}'), false);
      expect(payload.toString()).toBe('{"args":[1.0,2e3],"class":"Billing::Invoice","queue":"low"}');
    });

    it('refuses bytes that are not UTF-8 or not JSON without quoting them, and JSON that is not an object', () => {
      expect(problemOf(() => parseJobBody(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), false))).toEqual(
        invalid('The request body is not valid JSON.'),
      );
      expect(problemOf(() => parseJobBody(body('{"class": secret'), false))).toEqual(
        invalid('The request body is not valid JSON.'),
      );
      for (const value of ['[]', 'null', '"x"', '3'])
        expect(problemOf(() => parseJobBody(body(value), false))).toEqual(
          invalid('The request body must be a JSON object.'),
        );
    });

    it('names unknown keys sorted, at most ten, each cut to 40 characters; server-stamped keys are unknown', () => {
      expect(
        problemOf(() => parseJobBody(body({ class: 'A', args: [], enqueued_at: 1, created_at: 1 }), false)),
      ).toEqual(invalid('Unknown job keys: created_at, enqueued_at.', { unknown_keys: ['created_at', 'enqueued_at'] }));
      const many = Object.fromEntries(
        Array.from({ length: 12 }, (_, i) => [`k${String(i).padStart(2, '0')}${'x'.repeat(50)}`, 1]),
      );
      const { extensions } = problemOf(() => parseJobBody(body({ class: 'A', ...many }), false));
      expect(extensions.unknown_keys).toEqual(
        Array.from({ length: 10 }, (_, i) => `k${String(i).padStart(2, '0')}${'x'.repeat(37)}`),
      );
    });

    it('takes batch_size and spread_interval in a bulk body only', () => {
      const bulk = { class: 'A', args: [[1]], batch_size: 10, spread_interval: 5 };
      expect(parseJobBody(body(bulk), true).get('batch_size')).toBe(10);
      expect(problemOf(() => parseJobBody(body(bulk), false)).extensions).toEqual({
        unknown_keys: ['batch_size', 'spread_interval'],
      });
      for (const key of [
        'retry_for',
        'retry_queue',
        'expires_in',
        'track',
        'timeout',
        'deadline',
        'encrypt',
        'unique_for',
        'unique_until',
        'collapse',
        'log_level',
        'locale',
        'wrapped',
        'tags',
        'dead',
        'backtrace',
        'at',
        'retry',
        'queue',
      ]) {
        expect(() => parseJobBody(body({ class: 'A', args: [], [key]: 1 }), false)).not.toThrow();
      }
    });

    it('refuses a body nested deeper than Ruby parses (100 levels)', () => {
      const nested = (depth: number) => `{"class":"A","args":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
      expect(() => parseJobBody(body(nested(100)), false)).not.toThrow();
      expect(problemOf(() => parseJobBody(body(nested(101)), false))).toEqual(
        invalid('The request body nests deeper than 100 levels.'),
      );
    });

    it('checks a jid sent in the body: a string of 1 to 255 of A-Z a-z 0-9 _ -', () => {
      expect(parseJobBody(body({ class: 'A', jid: `a-Z_9${'x'.repeat(250)}` }), false).jid).toHaveLength(255);
      expect(problemOf(() => parseJobBody(body({ class: 'A', jid: 7 }), false))).toEqual(
        invalid('The jid must be a string of 1 to 255 characters of A-Z, a-z, 0-9, _ and -.'),
      );
      for (const jid of ['', 'x'.repeat(256), 'a b', 'ü', 'a/b']) {
        expect(problemOf(() => parseJobBody(body({ class: 'A', jid }), false))).toEqual(
          invalid('The jid must be 1 to 255 characters of A-Z, a-z, 0-9, _ and -.'),
        );
      }
      expect(validJid('abc')).toBe('abc');
    });

    it('checks the class: a Ruby constant name, namespaces allowed, at most 255 characters', () => {
      const refused = invalid(
        'The class must be a constant name such as HardWorker or Billing::Invoice, at most 255 characters.',
      );
      for (const name of ['HardWorker', 'Billing::Invoice', 'A_1::B2', `A${'b'.repeat(254)}`])
        expect(parseJobBody(body({ class: name }), false).className).toBe(name);
      for (const name of [
        'hardWorker',
        'Billing::',
        '::Billing',
        'Billing:Invoice',
        'Billing::invoice',
        'Hard Worker',
        '',
        7,
        `A${'b'.repeat(255)}`,
        'A-B',
      ]) {
        expect(problemOf(() => parseJobBody(body({ class: name }), false))).toEqual(refused);
      }
      expect(parseJobBody(body({ args: [] }), false).has('class')).toBe(false);
    });
  });

  describe('checkClassAllowed', () => {
    const admin: Principal = { id: 'a', scopes: new Set(['admin']) };
    const enqueuer: Principal = { id: 'e', scopes: new Set(['enqueue']) };
    const job = (members: Record<string, unknown>) => JobPayload.parse(JSON.stringify(members));

    it('with no allow-list, only an admin token may enqueue, any class', () => {
      expect(() => checkClassAllowed(job({ class: 'Anything' }), admin, undefined)).not.toThrow();
      expect(problemOf(() => checkClassAllowed(job({ class: 'Anything' }), enqueuer, undefined))).toEqual({
        type: 'class_not_allowed',
        status: 403,
        detail: 'Only an admin token may enqueue while no class allow-list is configured.',
        extensions: { job_class: 'Anything' },
        headers: {},
      });
    });

    it('a list binds every token, admin included; "any" lets every class through', () => {
      expect(() => checkClassAllowed(job({ class: 'Mailer' }), enqueuer, ['Mailer'])).not.toThrow();
      expect(problemOf(() => checkClassAllowed(job({ class: 'Other' }), admin, ['Mailer']))).toEqual({
        type: 'class_not_allowed',
        status: 403,
        detail: 'The class Other is not on the list of classes this API may enqueue.',
        extensions: { job_class: 'Other' },
        headers: {},
      });
      expect(problemOf(() => checkClassAllowed(job({ args: [] }), admin, ['Mailer']))).toMatchObject({
        detail: 'The class (none) is not on the list of classes this API may enqueue.',
        extensions: { job_class: null },
      });
      expect(() => checkClassAllowed(job({ class: 'Other' }), enqueuer, 'any')).not.toThrow();
    });
  });

  describe('checkArgsSize', () => {
    const job = (text: string) => JobPayload.parse(text);
    it('caps the JSON size of args, and of each job of a bulk body, naming it', () => {
      expect(() => checkArgsSize(job('{"args":["123"]}'), false, 7)).not.toThrow();
      expect(problemOf(() => checkArgsSize(job('{"args":["1234"]}'), false, 7))).toEqual({
        type: 'payload_too_large',
        status: 413,
        detail: 'The job arguments may not exceed 7 bytes of JSON.',
        extensions: { max_bytes: 7 },
        headers: {},
      });
      // Bytes, not characters.
      expect(problemOf(() => checkArgsSize(job('{"args":["éé"]}'), false, 7)).type).toBe('payload_too_large');
      expect(() => checkArgsSize(job('{"args":[["12345"],["1"]]}'), true, 9)).not.toThrow();
      expect(problemOf(() => checkArgsSize(job('{"args":[["1"],["123456"]]}'), true, 9))).toEqual({
        type: 'payload_too_large',
        status: 413,
        detail: 'The arguments of job 1 may not exceed 9 bytes of JSON.',
        extensions: { max_bytes: 9, job_index: 1 },
        headers: {},
      });
    });

    it('leaves args that are absent or not an array to the later checks', () => {
      expect(() => checkArgsSize(job('{"class":"A"}'), false, 1)).not.toThrow();
      expect(() => checkArgsSize(job('{"args":"a long string, not an array"}'), false, 1)).not.toThrow();
    });
  });

  it('checkTrack: track, when given, is true or false', () => {
    expect(() => checkTrack(JobPayload.parse('{"track":true}'))).not.toThrow();
    expect(() => checkTrack(JobPayload.parse('{"track":false}'))).not.toThrow();
    expect(() => checkTrack(JobPayload.parse('{}'))).not.toThrow();
    for (const value of ['1', '"yes"', 'null'])
      expect(problemOf(() => checkTrack(JobPayload.parse(`{"track":${value}}`)))).toEqual(
        invalid('track must be true or false.'),
      );
  });

  describe('checkStorableNumbers', () => {
    const refusal = (field: string) =>
      invalid(`${field} must be a number a double can hold: finite, and not so small it rounds to 0.`, { field });
    const check = (text: string) => () => checkStorableNumbers(JobPayload.parse(text));

    it('refuses a number that overflows or underflows a double, naming its path', () => {
      expect(problemOf(check('{"at":1e400}'))).toEqual(refusal('at'));
      expect(problemOf(check('{"at":-1e400}'))).toEqual(refusal('at'));
      expect(problemOf(check('{"at":1e-400}'))).toEqual(refusal('at'));
      expect(problemOf(check('{"args":[1,{"amount":2.5e-999}]}'))).toEqual(refusal('args[1].amount'));
      expect(problemOf(check('{"args":[[0,[1E+999]]]}'))).toEqual(refusal('args[0][1][0]'));
      expect(problemOf(check('{"tags":{"a":{"b":-5e-400}}}'))).toEqual(refusal('tags.a.b'));
      expect(problemOf(check(`{"args":[${'9'.repeat(400)}]}`))).toEqual(refusal('args[0]'));
      // A number written with a leading 0 is checked too.
      expect(problemOf(check('{"at":0.5e-400}'))).toEqual(refusal('at'));
      expect(problemOf(check('{"args":[{"":{"a":1e400}}]}'))).toEqual(refusal('args[0]..a'));
      // Found past members that hold nothing wrong.
      expect(problemOf(check('{"args":[{"ok":1,"also":[2],"bad":1e400}]}'))).toEqual(refusal('args[0].bad'));
    });

    it('accepts zeros written any way, numbers in range, and number-like strings', () => {
      for (const text of [
        '{"at":0e-400}',
        '{"at":0.000e5}',
        '{"at":-0E-999}',
        '{"at":1e308}',
        '{"at":2.2e-308}',
        '{"args":["1e400",true,null]}',
        `{"args":[0.${'0'.repeat(400)}]}`,
      ]) {
        expect(check(text)).not.toThrow();
      }
    });
  });
});
