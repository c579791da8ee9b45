import { freshEachTest } from '../support/fresh-module';

describe('consoleLogger (standalone use, without Nest)', () => {
  afterEach(() => jest.restoreAllMocks());
  // The logger is an object built at import.
  const fresh = freshEachTest(
    () => require('../../src/server/server-logger') as typeof import('../../src/server/server-logger'),
  );

  it('writes each level to its console method, prefixed [wurk]', () => {
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const { consoleLogger } = fresh.module;
    consoleLogger.log('started');
    consoleLogger.warn('slow');
    consoleLogger.error('failed');
    expect(log.mock.calls).toEqual([['[wurk] started']]);
    expect(warn.mock.calls).toEqual([['[wurk] slow']]);
    expect(error.mock.calls).toEqual([['[wurk] failed']]);
  });
});
