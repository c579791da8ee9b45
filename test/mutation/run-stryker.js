/**
 * `npm run mutate:ts [unit ...]`: Stryker over each unit in turn (all of test/mutation/stryker-units.json by
 * default), then the score of every unit and folder from the committed incremental files, so the table also
 * shows units this run did not touch. `--report` prints the table without running anything.
 *
 * Score as Stryker counts it: (killed + timed out) / (killed + timed out + survived + no coverage); mutants
 * that do not compile or crash the runner are invalid and left out, ignored ones (marked equivalent in the
 * source with the reason) too.
 */
const { spawnSync } = require('node:child_process');
const { existsSync, readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..', '..');
const UNITS = require('./stryker-units.json');
const FOLDERS = ['server', 'periodic', 'status', 'api', 'client', 'job', 'redis'];
const KEYS = ['mutants', 'Killed', 'Timeout', 'Survived', 'NoCoverage', 'invalid', 'Ignored'];
const args = process.argv.slice(2);
const reportOnly = args.includes('--report');
const chosen = args.filter((arg) => !arg.startsWith('--'));
for (const unit of chosen) {
  if (!(unit in UNITS)) throw new Error(`unknown unit ${unit}; one of ${Object.keys(UNITS).join(', ')}`);
}

/** Runs a child to its end; its exit status (0 = done). */
function run(command, argv, env = {}) {
  return spawnSync(command, argv, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } }).status ?? 1;
}

/** A unit's counts from its incremental file; `checkpoint` = a run cut short, with how many of its mutants it decided. */
function countsOf(unit) {
  const file = join(__dirname, 'incremental', `${unit}.json`);
  if (!existsSync(file)) return undefined;
  const report = JSON.parse(readFileSync(file, 'utf8'));
  const counts = Object.fromEntries(KEYS.map((key) => [key, 0]));
  if (report.wurkCheckpoint) counts.checkpoint = report.wurkCheckpoint;
  for (const { mutants } of Object.values(report.files)) {
    for (const { status } of mutants) {
      counts.mutants += 1;
      const key = status === 'CompileError' || status === 'RuntimeError' ? 'invalid' : status;
      counts[key] = (counts[key] ?? 0) + 1;
    }
  }
  return counts;
}

function scoreOf(c) {
  const detected = c.Killed + c.Timeout;
  const valid = detected + c.Survived + c.NoCoverage;
  return valid === 0 ? '–' : `${((100 * detected) / valid).toFixed(1)} %`;
}

function row(name, c) {
  const score = scoreOf(c);
  return `| ${name} | ${c.mutants} | ${c.Killed} | ${c.Timeout} | ${c.Survived} | ${c.NoCoverage} | ${c.invalid} | ${c.Ignored} | ${score} |`;
}

function add(into, counts) {
  for (const key of KEYS) into[key] += counts[key];
}

function printScores() {
  const rows = [
    '| unit | mutants | killed | timed out | survived | no coverage | invalid | ignored | score |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const total = Object.fromEntries(KEYS.map((key) => [key, 0]));
  for (const folder of FOLDERS) {
    const units = Object.keys(UNITS).filter((unit) => unit === folder || unit.startsWith(`${folder}-`));
    const sum = Object.fromEntries(KEYS.map((key) => [key, 0]));
    const missing = [];
    for (const unit of units) {
      const counts = countsOf(unit);
      if (!counts || counts.checkpoint) {
        missing.push(unit);
        // A unit cut short is not measured: its row says how far it got, and its folder is summed without it.
        const state = counts
          ? `cut short: ${counts.checkpoint.decided} of ${counts.checkpoint.planned} decided, ${scoreOf(counts)} of those`
          : 'not run';
        if (units.length > 1 || counts) rows.push(`| ${unit} | ${state} | | | | | | | |`);
        continue;
      }
      add(sum, counts);
      // A unit that covers only part of its folder (redis-plain) gets its own row too.
      if (units.length > 1 || unit !== folder) rows.push(row(unit, counts));
    }
    if (missing.length === units.length) {
      if (units.length === 1) rows.push(`| src/${folder} | not run | | | | | | | |`);
      continue;
    }
    add(total, sum);
    rows.push(row(`**src/${folder}**${missing.length > 0 ? ` (without ${missing.join(', ')})` : ''}`, sum));
  }
  rows.push(row('**total run**', total));
  console.log(rows.join('\n'));
}

/**
 * The test files that import the unit's files, directly or not: the only ones that can cover a mutant of it
 * (code run in a worker thread or a child process is out of Stryker's sight anyway). The initial run, which
 * runs every test file of the config to map coverage, is kept to them (stryker.jest.config.js reads the list).
 */
function writeRelatedTests(unit) {
  const { minimatch } = require('minimatch');
  const globs = UNITS[unit];
  const files = spawnSync('git', ['ls-files', 'src'], { cwd: root, encoding: 'utf8' })
    .stdout.split('\n')
    .filter(
      (file) =>
        globs.some((glob) => !glob.startsWith('!') && minimatch(file, glob)) &&
        !globs.some((glob) => glob.startsWith('!') && minimatch(file, glob.slice(1))),
    );
  const listed = spawnSync(
    process.execPath,
    [
      require.resolve('jest/bin/jest'),
      '--config',
      join(__dirname, 'stryker.jest.config.js'),
      '--listTests',
      '--findRelatedTests',
      ...files,
    ],
    { cwd: root, encoding: 'utf8' },
  );
  if (listed.status !== 0) throw new Error(`jest --listTests failed for ${unit}: ${listed.stderr}`);
  const tests = listed.stdout
    .split('\n')
    .filter(Boolean)
    .map((path) => relative(root, path))
    .sort();
  const out = join(root, 'test', '.artifacts', `related-${unit}.json`);
  writeFileSync(out, JSON.stringify(tests, null, 1));
  console.log(`${unit}: ${files.length} source file(s), ${tests.length} related test file(s)`);
  return out;
}

const failed = [];
if (!reportOnly) {
  // The dashboard tests serve dashboard/dist, which a fresh clone lacks (npm test builds it): without it every unit's
  // initial run fails on them.
  if (!existsSync(join(root, 'dashboard', 'dist', 'index.html')) && run('npm', ['run', 'build:dashboard']) !== 0)
    process.exit(1);
  if (run(process.execPath, [join(__dirname, 'list-tests.js')]) !== 0) process.exit(1);
  for (const unit of chosen.length > 0 ? chosen : Object.keys(UNITS)) {
    const related = writeRelatedTests(unit);
    // A unit that fails (a flaky test in its initial run) keeps its old result; the units after it still run.
    const status = run(
      process.execPath,
      [join(root, 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js'), 'run'],
      { WURK_MUTATE_UNIT: unit, WURK_RELATED_TESTS: related },
    );
    if (status !== 0) failed.push(unit);
  }
}
printScores();
if (failed.length > 0) {
  console.error(`not measured (Stryker failed, see above): ${failed.join(', ')}`);
  process.exit(1);
}
