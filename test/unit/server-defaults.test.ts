import { freshEachTest } from '../support/fresh-module';

/** The process plane's defaults, as Sidekiq's: what an app that sets nothing gets. */
describe('SERVER_DEFAULTS', () => {
  // An object built at import.
  const fresh = freshEachTest(
    () => require('../../src/server/server-options') as typeof import('../../src/server/server-options'),
  );

  it("writes execution metrics by default, as Sidekiq 7+ does (its Web UI's Metrics page reads them)", () => {
    expect(fresh.module.SERVER_DEFAULTS.executionMetrics).toBe(true);
  });

  it('retries 25 times, keeps 10,000 dead jobs for 180 days, and reschedules an over-limit job 20 times', () => {
    expect(fresh.module.SERVER_DEFAULTS).toMatchObject({
      maxRetries: 25,
      deadMaxJobs: 10000,
      deadTimeout: 15552000,
      overLimitRetries: 20,
    });
  });
});
