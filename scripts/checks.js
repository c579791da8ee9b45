/**
 * `npm test`'s static checks, two at a time: the type check, the layer rules, the lint, the layout and the dashboard's
 * build. One after the other they took 96 s on an idle 2-core machine before Jest; side by side, 50 s. Each check's
 * output is printed whole when it ends (never interleaved), and the run fails naming every check that failed.
 *
 * `node scripts/checks.js [--jobs=N]`: N checks at once (default: 2, the cores the suite is sized for).
 */
const { spawn } = require('node:child_process');
const { join } = require('node:path');

const root = join(__dirname, '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);

/** Longest first, so the last one to start is short (seconds alone on an idle 2-core machine, after each). */
const CHECKS = [
  { name: 'lint', argv: [bin('eslint'), 'src', 'test', 'bench', 'sample', 'docs'] }, // 46
  { name: 'types', argv: [bin('tsc'), '-p', 'tsconfig.json', '--noEmit'] }, // 24
  { name: 'format', argv: [bin('prettier'), '--check', '--log-level', 'warn', '.'] }, // 19
  { name: 'layers', argv: [bin('depcruise'), 'src', '--config', '.dependency-cruiser.cjs'] }, // 3.5
  { name: 'dashboard', argv: ['npm', 'run', '--silent', 'build:dashboard'] }, // 3.3
];

const jobsFlag = process.argv.find((arg) => arg.startsWith('--jobs='));
const jobs = Math.max(1, Number(jobsFlag?.slice('--jobs='.length) ?? 2));

/** Runs one check to its end; resolves to whether it passed, its output kept for printing in one piece. */
function run({ name, argv }) {
  const began = Date.now();
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: root });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (error) => output.push(Buffer.from(`${error.message}\n`)));
    child.on('close', (code) => {
      const seconds = ((Date.now() - began) / 1000).toFixed(1);
      const passed = code === 0;
      process.stdout.write(`\n> ${name}: ${argv.slice(1).join(' ')} (${passed ? 'passed' : 'FAILED'}, ${seconds} s)\n`);
      process.stdout.write(Buffer.concat(output));
      resolve(passed);
    });
  });
}

async function main() {
  const queue = [...CHECKS];
  const failed = [];
  const lane = async () => {
    for (let check = queue.shift(); check; check = queue.shift()) if (!(await run(check))) failed.push(check.name);
  };
  await Promise.all(Array.from({ length: Math.min(jobs, CHECKS.length) }, lane));
  if (failed.length > 0) {
    process.stdout.write(`\nchecks failed: ${failed.join(', ')}\n`);
    process.exitCode = 1;
  } else process.stdout.write(`\nchecks passed: ${CHECKS.map((check) => check.name).join(', ')}\n`);
}

void main();
