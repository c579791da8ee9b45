import { consoleLogger } from '../../src/server/server-logger';

describe('consoleLogger (standalone use, without Nest)', () => {
  afterEach(() => jest.restoreAllMocks());

  it('writes each level to its console method, prefixed [wurk]', () => {
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    consoleLogger.log('started');
    consoleLogger.warn('slow');
    consoleLogger.error('failed');
    expect(log.mock.calls).toEqual([['[wurk] started']]);
    expect(warn.mock.calls).toEqual([['[wurk] slow']]);
    expect(error.mock.calls).toEqual([['[wurk] failed']]);
  });
});
