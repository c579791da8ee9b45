/**
 * `npm test`'s static checks, two at a time: the type check, the layer rules, the lint, the layout and the dashboard's
 * build. One after the other they took 96 s on an idle 2-core machine before Jest; side by side, 50 s. Each check's
 * output is printed whole when it ends (never interleaved), and the run fails naming every check that failed.
 *
 * `node scripts/checks.js [--jobs=N] [--skip=NAME,...]`: N checks at once (default: 2, the cores the suite is sized
 * for); the named checks left out (`npm test` builds the dashboard before its suite starts: scripts/test.js).
 */
const { spawn } = require('node:child_process');
const { join } = require('node:path');

const root = join(__dirname, '..');

/**
 * Each check is the package.json script of the same job (one place says how a check runs). Longest first, so the
 * last one to start is short (seconds alone on an idle 2-core machine, after each).
 */
const CHECKS = [
  { name: 'lint', script: 'lint' }, // 46
  { name: 'types', script: 'test:types' }, // 24
  { name: 'format', script: 'format:check' }, // 19
  { name: 'layers', script: 'lint:deps' }, // 3.5
  { name: 'dashboard', script: 'build:dashboard' }, // 3.3
];

const jobsFlag = process.argv.find((arg) => arg.startsWith('--jobs='));
const jobs = Math.max(1, Number(jobsFlag?.slice('--jobs='.length) ?? 2));
const skipFlag = process.argv.find((arg) => arg.startsWith('--skip='));
const skipped = skipFlag ? skipFlag.slice('--skip='.length).split(',') : [];
for (const name of skipped) {
  if (!CHECKS.some((check) => check.name === name))
    throw new Error(`--skip=${name}: no such check (${CHECKS.map((check) => check.name).join(', ')})`);
}
const chosen = CHECKS.filter((check) => !skipped.includes(check.name));

/** Runs one check to its end; resolves to whether it passed, its output kept for printing in one piece. */
function run({ name, script }) {
  const began = Date.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script], { cwd: root });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (error) => output.push(Buffer.from(`${error.message}\n`)));
    child.on('close', (code) => {
      const seconds = ((Date.now() - began) / 1000).toFixed(1);
      const passed = code === 0;
      process.stdout.write(`\n> ${name}: npm run ${script} (${passed ? 'passed' : 'FAILED'}, ${seconds} s)\n`);
      process.stdout.write(Buffer.concat(output));
      resolve(passed);
    });
  });
}

async function main() {
  const queue = [...chosen];
  const failed = [];
  const lane = async () => {
    for (let check = queue.shift(); check; check = queue.shift()) if (!(await run(check))) failed.push(check.name);
  };
  await Promise.all(Array.from({ length: Math.min(jobs, chosen.length) }, lane));
  if (failed.length > 0) {
    process.stdout.write(`\nchecks failed: ${failed.join(', ')}\n`);
    process.exitCode = 1;
  } else process.stdout.write(`\nchecks passed: ${chosen.map((check) => check.name).join(', ')}\n`);
}

void main();
