/**
 * `npm run sample:test`: the sample's own tests, which use wurk's testing
 * module and need no redis-server (so no globalSetup check for one). `npm
 * test` runs them too, through the root config's roots.
 */
const root = require('../jest.config.js');

module.exports = { ...root, rootDir: '..', roots: ['<rootDir>/sample'], globalSetup: undefined };
