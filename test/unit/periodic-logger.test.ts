import { freshEachTest } from '../support/fresh-module';

/** The periodic core's default logger, built at import (loaded per test), and its error text. */
describe('periodic: console logger', () => {
  const fresh = freshEachTest(
    () => require('../../src/periodic/periodic-logger') as typeof import('../../src/periodic/periodic-logger'),
  );
  afterEach(() => jest.restoreAllMocks());

  it('writes each level to the console under a [wurk:periodic] prefix', () => {
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    fresh.module.consoleLogger.log('a');
    fresh.module.consoleLogger.warn('b');
    fresh.module.consoleLogger.error('c');
    expect([log.mock.calls, warn.mock.calls, error.mock.calls]).toEqual([
      [['[wurk:periodic] a']],
      [['[wurk:periodic] b']],
      [['[wurk:periodic] c']],
    ]);
  });

  it('names an error by its class and message, anything else by its text', () => {
    expect(fresh.module.errorText(new TypeError('bad'))).toBe('TypeError: bad');
    expect(fresh.module.errorText('plain')).toBe('plain');
  });
});
