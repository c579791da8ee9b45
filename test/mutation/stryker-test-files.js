/**
 * Keeps a Stryker mutant run to the test files that hold its covering tests, fastest first.
 *
 * Stryker's Jest runner passes the covering tests as --testNamePattern together with --findRelatedTests on the
 * mutated file, so Jest still loads every test file that imports it (nearly all of them for src/job/), each
 * paying for Nest and its imports before finding no test to run. test/mutation/list-tests.js writes which file
 * holds which test name; here a file stays in the run when one of its names matches the pattern, or when it is
 * not in that list at all (a file newer than the list is never dropped). Without a pattern (the dry run) every
 * file stays.
 */
const { existsSync, readFileSync } = require('node:fs');
const { join, relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const TEST_NAMES = join(__dirname, '..', '.artifacts', 'test-names.json');

class StrykerTestFiles extends Sequencer {
  constructor(options) {
    super(options);
    this.pattern = options.globalConfig.testNamePattern;
    this.rootDir = options.globalConfig.rootDir;
    this.namesByFile = existsSync(TEST_NAMES) ? JSON.parse(readFileSync(TEST_NAMES, 'utf8')) : {};
  }

  async sort(tests) {
    const fastestFirst = (await super.sort(tests)).reverse();
    if (!this.pattern) return fastestFirst;
    const pattern = new RegExp(this.pattern, 'i');
    return fastestFirst.filter((test) => {
      const names = this.namesByFile[relative(this.rootDir, test.path)];
      return names === undefined || names.some((name) => pattern.test(name));
    });
  }
}

module.exports = StrykerTestFiles;
