/**
 * Bail for Stryker's Jest runner, which cannot pass --bail to Jest: once a test fails under the active mutant,
 * the mutant is killed, so every later test of that run is skipped. Skipping at the start of each describe
 * block also skips its beforeAll hooks, so the test files left in the run do not start redis-servers.
 * Runs are in band (one process), so process.env carries the verdict from one test file to the next.
 */
const { TestEnvironment } = require('jest-environment-node');

const ACTIVE_MUTANT = '__STRYKER_ACTIVE_MUTANT__';
const KILLED_MUTANT = 'WURK_STRYKER_KILLED_MUTANT';

function skipAll(block) {
  for (const child of block.children) {
    if (child.type === 'test') child.mode = 'skip';
    else skipAll(child);
  }
}

class StrykerBailEnvironment extends TestEnvironment {
  async handleTestEvent(event) {
    const mutant = process.env[ACTIVE_MUTANT];
    if (mutant === undefined) return;
    if (event.name === 'test_done' && event.test.errors.length > 0) process.env[KILLED_MUTANT] = mutant;
    if (process.env[KILLED_MUTANT] !== mutant) return;
    if (event.name === 'run_describe_start') skipAll(event.describeBlock);
    if (event.name === 'test_start') event.test.mode = 'skip';
  }
}

module.exports = StrykerBailEnvironment;
