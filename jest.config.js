/**
 * Every suite runs against real parts: a private redis-server per test file (test/support/redis-server.ts).
 *
 * Nest 12 ships as ES modules only. Node 20 loads them from CommonJS through
 * require(esm), but Jest's module runtime does not (before Node 24.9), so the
 * ESM packages of node_modules are compiled to CommonJS for the tests alone.
 * The installed package itself is proven on real Node by .ci/pack-check.sh.
 */
const esmPackages = ['@nestjs'];

module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  // src is a root too, so Jest's dependency graph (--findRelatedTests, mutation runs) reaches the code under test;
  // sample/ holds the sample app's own tests (testing module, no Redis), also run by `npm run sample:test`.
  roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/sample', '<rootDir>/docs'],
  testMatch: ['**/*.test.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  // A heartbeat thread started from src/ cannot use ts-jest: it preloads ts-node instead.
  setupFiles: ['<rootDir>/test/support/heartbeat-from-source.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    '^.+\\.m?js$': '<rootDir>/test/support/esm-to-cjs.js',
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages.join('|')})/)`],
  testTimeout: 60000,
};
