/**
 * Writes test/.artifacts/test-names.json: each test file of the Stryker config with the full names of its
 * tests, read by test/mutation/stryker-test-files.js. Jest collects the names without running a test (a name
 * pattern that matches none skips every test and, with them, every beforeAll hook).
 */
const { execFileSync } = require('node:child_process');
const { mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..', '..');
const out = join(root, 'test', '.artifacts');
mkdirSync(out, { recursive: true });
const raw = join(out, 'test-list.json');
execFileSync(
  process.execPath,
  [
    require.resolve('jest/bin/jest'),
    '--config',
    join(__dirname, 'stryker.jest.config.js'),
    '--json',
    `--outputFile=${raw}`,
    '--testNamePattern',
    '^wurk-no-test-has-this-name$',
    '--runInBand',
    '--silent',
    // Jest's own order: the Stryker sequencer would keep only the files missing from the previous list.
    `--testSequencer=${require.resolve('@jest/test-sequencer')}`,
  ],
  { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
);
const namesByFile = {};
for (const file of JSON.parse(readFileSync(raw, 'utf8')).testResults) {
  namesByFile[relative(root, file.name)] = file.assertionResults.map((test) => test.fullName);
}
writeFileSync(join(out, 'test-names.json'), JSON.stringify(namesByFile, null, 1));
console.log(`test-names.json: ${Object.keys(namesByFile).length} files`);
