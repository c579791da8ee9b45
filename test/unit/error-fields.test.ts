import { inflateSync } from 'node:zlib';
import { backtraceOf, encodeBacktrace, errorClassOf, errorMessageOf } from '../../src/server/retry/error-fields';

class MailboxFull extends Error {}

/** A value whose every property read and conversion throws: what a hostile perform can throw. */
const hostile = new Proxy(
  {},
  {
    get() {
      throw new Error('no reads');
    },
    getPrototypeOf() {
      throw new Error('no prototype');
    },
  },
);

/**
 * `error_class`, `error_message` and `error_backtrace` of a failure as Sidekiq records them, for anything a
 * perform can throw. In a server these run on every failure; the chaos test that throws strange values runs
 * them in a child process, out of reach of coverage, so the rules are pinned here one by one.
 */
describe('error fields of a failure', () => {
  describe('errorClassOf: the class name Sidekiq records', () => {
    it('is the constructor name of an Error subclass', () => {
      expect(errorClassOf(new MailboxFull('x'))).toBe('MailboxFull');
      expect(errorClassOf(new TypeError('x'))).toBe('TypeError');
    });

    it("is a plain Error's own name when it set one, else Error", () => {
      const named = new Error('x');
      named.name = 'Net::ReadTimeout';
      expect(errorClassOf(named)).toBe('Net::ReadTimeout');
      expect(errorClassOf(new Error('x'))).toBe('Error');
      const blank = new Error('x');
      blank.name = '';
      expect(errorClassOf(blank)).toBe('Error');
      const odd = new Error('x');
      (odd as { name: unknown }).name = 42;
      expect(errorClassOf(odd)).toBe('Error');
    });

    it('is the constructor name of an Error subclass even when it renamed itself', () => {
      const renamed = new MailboxFull('x');
      renamed.name = 'Other';
      expect(errorClassOf(renamed)).toBe('MailboxFull');
    });

    it('is an Error with no usable constructor name: its name', () => {
      const anonymous = new (class extends Error {})('x');
      Object.defineProperty(anonymous.constructor, 'name', { value: '' });
      anonymous.name = 'Anon';
      expect(errorClassOf(anonymous)).toBe('Anon');
    });

    it('is an Error whose constructor is gone or nameless: its name', () => {
      const detached = new Error('x');
      detached.name = 'Net::ReadTimeout';
      Object.defineProperty(detached, 'constructor', { value: undefined });
      expect(errorClassOf(detached)).toBe('Net::ReadTimeout');
      const nameless = new Error('x');
      nameless.name = 'Redis::CannotConnectError';
      Object.defineProperty(nameless, 'constructor', { value: {} });
      expect(errorClassOf(nameless)).toBe('Redis::CannotConnectError');
    });

    it('is the typeof of a primitive, and Object for an object without a named constructor', () => {
      expect(errorClassOf('text')).toBe('string');
      expect(errorClassOf(7)).toBe('number');
      expect(errorClassOf(Symbol('s'))).toBe('symbol');
      expect(errorClassOf(undefined)).toBe('undefined');
      expect(errorClassOf(null)).toBe('object');
      expect(errorClassOf({ code: 1 })).toBe('Object');
      expect(errorClassOf(Object.create(null))).toBe('Object');
      expect(errorClassOf(new (class Rejection {})())).toBe('Rejection');
      const blank = { constructor: { name: '' } };
      expect(errorClassOf(blank)).toBe('Object');
    });

    it('is Error for a value that throws when looked at', () => {
      expect(errorClassOf(hostile)).toBe('Error');
    });
  });

  describe('errorMessageOf: the message, best effort, truncated as Sidekiq does', () => {
    it("is an Error's message and any other value's text", () => {
      expect(errorMessageOf(new MailboxFull('full'))).toBe('full');
      expect(errorMessageOf('plain')).toBe('plain');
      expect(errorMessageOf(Symbol('strange'))).toBe('Symbol(strange)');
      expect(errorMessageOf(42)).toBe('42');
    });

    it('says that undefined or null was thrown, never the bare word that reads as "no error"', () => {
      expect(errorMessageOf(undefined)).toBe(
        'undefined was thrown, not an Error (throw an Error to give the failure a message and a stack)',
      );
      expect(errorMessageOf(null)).toBe(
        'null was thrown, not an Error (throw an Error to give the failure a message and a stack)',
      );
    });

    it('is the JSON of a plain object, not "[object Object]"', () => {
      expect(errorMessageOf({ code: 42 })).toBe('{"code":42}');
      expect(errorMessageOf([1, 2])).toBe('1,2');
      expect(errorMessageOf({ toString: () => 'custom text' })).toBe('custom text');
    });

    it('is the JSON of an object without a usable toString', () => {
      const bare = Object.assign(Object.create(null), { code: 7 });
      expect(errorMessageOf(bare)).toBe('{"code":7}');
      const throwing = {
        toString: () => {
          throw new Error('no');
        },
        code: 8,
      };
      expect(errorMessageOf(throwing)).toBe('{"code":8}');
    });

    it('names the class when there is nothing printable', () => {
      const cyclic: Record<string, unknown> = {
        toString: () => {
          throw new Error('no');
        },
      };
      cyclic.self = cyclic;
      expect(errorMessageOf(cyclic)).toBe('(an unprintable Object)');
      expect(errorMessageOf(hostile)).toBe('(an unprintable Error)');
      // JSON.stringify answers undefined (not a string) for a toJSON that returns nothing.
      const silent = {
        toString: () => {
          throw new Error('no');
        },
        toJSON: () => undefined,
      };
      expect(errorMessageOf(silent)).toBe('(an unprintable Object)');
    });

    it('keeps 10,000 characters, the first ones', () => {
      const exact = 'a'.repeat(10000);
      expect(errorMessageOf(new Error(exact))).toBe(exact);
      expect(errorMessageOf(new Error(`${exact}bcd`))).toBe(exact);
    });
  });

  describe('backtraceOf and encodeBacktrace: error_backtrace as Sidekiq 7.2.1+ writes it', () => {
    const error = new Error('x');
    error.stack =
      'Error: missed the deadline at noon\n    at perform (/app/job.ts:3:9)\n  at  run (/app/x.ts:1:1)\n\tat tick (node:internal)\nnot a frame at all';

    it('keeps the frame lines, without their indentation and "at "', () => {
      expect(backtraceOf(error)).toEqual(['perform (/app/job.ts:3:9)', ' run (/app/x.ts:1:1)', 'tick (node:internal)']);
    });

    it('is empty for a value that is not an Error, a stack that is not text, or one that throws when read', () => {
      expect(backtraceOf('boom')).toEqual([]);
      const stackless = new Error('x');
      (stackless as { stack: unknown }).stack = 42;
      expect(backtraceOf(stackless)).toEqual([]);
      const throwing = new Error('x');
      Object.defineProperty(throwing, 'stack', {
        get: () => {
          throw new Error('no');
        },
      });
      expect(backtraceOf(throwing)).toEqual([]);
    });

    it('deflates the JSON of every line (true) or of the first N, in base64', () => {
      const decode = (text: string) => JSON.parse(inflateSync(Buffer.from(text, 'base64')).toString('utf8'));
      expect(decode(encodeBacktrace(error, true))).toEqual(backtraceOf(error));
      expect(decode(encodeBacktrace(error, 2))).toEqual(backtraceOf(error).slice(0, 2));
    });
  });
});
