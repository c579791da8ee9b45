/**
 * `npm run mutate:ts [folder ...]`: Stryker over each folder in turn (all six by default), then the score of
 * every folder from its committed incremental file, so the table also shows folders this run did not touch.
 * `--report` prints the table without running anything.
 *
 * Score as Stryker counts it: (killed + timed out) / (killed + timed out + survived + no coverage); mutants
 * that do not compile or crash the runner are invalid and left out, ignored ones too.
 */
const { spawnSync } = require('node:child_process');
const { existsSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const FOLDERS = ['server', 'periodic', 'status', 'api', 'client', 'job'];
const root = join(__dirname, '..', '..');
const args = process.argv.slice(2);
const reportOnly = args.includes('--report');
const chosen = args.filter((arg) => !arg.startsWith('--'));
for (const folder of chosen) {
  if (!FOLDERS.includes(folder)) throw new Error(`unknown folder ${folder}; one of ${FOLDERS.join(', ')}`);
}

function run(command, argv, env = {}) {
  const result = spawnSync(command, argv, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function countsOf(folder) {
  const file = join(root, 'test', 'mutation', 'incremental', `${folder}.json`);
  const counts = { mutants: 0, Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0, invalid: 0, Ignored: 0, Pending: 0 };
  if (!existsSync(file)) return undefined;
  for (const { mutants } of Object.values(JSON.parse(readFileSync(file, 'utf8')).files)) {
    for (const { status } of mutants) {
      counts.mutants += 1;
      if (status === 'CompileError' || status === 'RuntimeError') counts.invalid += 1;
      else counts[status] = (counts[status] ?? 0) + 1;
    }
  }
  return counts;
}

function printScores() {
  const rows = ['| folder | mutants | killed | timed out | survived | no coverage | invalid | ignored | score |', '|---|---|---|---|---|---|---|---|---|'];
  const total = { mutants: 0, Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0, invalid: 0, Ignored: 0 };
  for (const folder of FOLDERS) {
    const counts = countsOf(folder);
    if (!counts) {
      rows.push(`| ${folder} | not run | | | | | | | |`);
      continue;
    }
    for (const key of Object.keys(total)) total[key] += counts[key];
    rows.push(row(`src/${folder}`, counts));
  }
  rows.push(row('**total**', total));
  console.log(rows.join('\n'));
}

function row(name, c) {
  const detected = c.Killed + c.Timeout;
  const valid = detected + c.Survived + c.NoCoverage;
  const score = valid === 0 ? '–' : `${((100 * detected) / valid).toFixed(1)} %`;
  return `| ${name} | ${c.mutants} | ${c.Killed} | ${c.Timeout} | ${c.Survived} | ${c.NoCoverage} | ${c.invalid} | ${c.Ignored} | ${score} |`;
}

if (!reportOnly) {
  run(process.execPath, [join(__dirname, 'list-tests.js')]);
  for (const folder of chosen.length > 0 ? chosen : FOLDERS) {
    run(process.execPath, [join(root, 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js'), 'run'], { WURK_MUTATE_FOLDER: folder });
  }
}
printScores();
