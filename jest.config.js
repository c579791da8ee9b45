/**
 * Every suite runs against real parts: a private redis-server per test file (test/support/redis-server.ts).
 *
 * Nest 12 ships as ES modules only. Node 20 loads them from CommonJS through
 * require(esm), but Jest's module runtime does not (before Node 24.9), so the
 * ESM packages of node_modules are compiled to CommonJS for the tests by the
 * transform the package ships for its users (jest/transform.js, exported as
 * `nestjs-wurk/jest-transform`; .ci/pack-check.sh runs a user's Jest 30 on it
 * through `preset: 'nestjs-wurk'`). The repo's own .ts files stay on ts-jest.
 */
const esmPackages = ['@nestjs'];

module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  // src is a root too, so Jest's dependency graph (--findRelatedTests, mutation runs) reaches the code under test.
  roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/sample', '<rootDir>/docs'],
  testMatch: ['**/*.test.ts'],
  // The sample's own tests prove that its app opens no socket at all. `net` is shared by every test file a Jest worker
  // runs, so a client another file left reconnecting would be counted against them: `npm test` runs them in a Jest
  // process of their own first (`npm run sample:test`, sample/jest.config.js).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/sample/'],
  // Long suites first on a machine whose Jest cache has no timings yet (CI): see the sequencer's header.
  testSequencer: '<rootDir>/test/support/long-first-sequencer.js',
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  // A heartbeat thread started from src/ cannot use ts-jest: it preloads ts-node instead.
  setupFiles: ['<rootDir>/test/support/heartbeat-from-source.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    '^.+\\.m?js$': '<rootDir>/jest/transform.js',
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages.join('|')})/)`],
  testTimeout: 60000,
};
