/**
 * The Jest config Stryker runs (`npm run mutate:ts`): the suite of jest.config.js without the test files that
 * cost minutes per mutant yet check what the mutated folders do not decide, plus two helpers that keep a
 * mutant's run to the tests that can kill it (see each file).
 *
 * Left out, and why none of them is a killer the rest of the suite lacks:
 * - test/e2e/dashboard.browser.test.ts: Chromium drives the dashboard bundle; the admin routes it calls are
 *   pinned over HTTP by test/e2e/api-admin*.test.ts and test/integration/admin-*.test.ts.
 * - test/docs/*.test.ts, test/unit/optional-peers.test.ts: check the documentation (examples, links, the
 *   generated references) and load the entry points in a child Node; they pin docs and packaging, not behaviour.
 * - test/interop/* except payload-bytes, unique-digest and invalid-payloads-in-dead: each boots Ruby Sidekiq
 *   (4 to 20 s a file) to read or run what wurk wrote; the bytes and keys they read are pinned by the three
 *   kept files and by the integration tests against the same redis-server.
 * - test/chaos/* except wrong-types and strange-throws: kill -9, redis restarts, Sentinel failover and
 *   poison floods run 6 to 45 s each; the rules they exercise (recovery, dead filing, requeue) have focused
 *   integration tests (server-orphans, server-retry, redis-outage, server-invalid-bytes, ...).
 */
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const base = require('../../jest.config.js');

const leftOut = [
  '/test/e2e/dashboard\\.browser\\.test\\.ts$',
  '/test/docs/',
  '/test/unit/optional-peers\\.test\\.ts$',
  '/test/interop/(?!(payload-bytes|unique-digest|invalid-payloads-in-dead)\\.test\\.ts$)',
  '/test/chaos/(?!(wrong-types|strange-throws)\\.test\\.ts$)',
];

// Set by run-stryker.js: the test files that import the unit under mutation; no other file can cover it.
const related = process.env.WURK_RELATED_TESTS
  ? JSON.parse(readFileSync(process.env.WURK_RELATED_TESTS, 'utf8'))
  : undefined;

module.exports = {
  ...base,
  ...(related ? { testMatch: related.map((file) => `<rootDir>/${file}`) } : {}),
  rootDir: join(__dirname, '..', '..'),
  testPathIgnorePatterns: ['/node_modules/', ...leftOut],
  testEnvironment: join(__dirname, 'stryker-bail-environment.js'),
  testSequencer: join(__dirname, 'stryker-test-files.js'),
};
