/**
 * `npm run sample:test`: the sample's own tests, which use wurk's testing
 * module and need no redis-server (so no globalSetup check for one). `npm
 * test` runs them first, in this Jest process of their own (see the root config's testPathIgnorePatterns).
 */
const root = require('../jest.config.js');

module.exports = {
  ...root,
  rootDir: '..',
  roots: ['<rootDir>/sample'],
  testPathIgnorePatterns: ['/node_modules/'],
  globalSetup: undefined,
};
