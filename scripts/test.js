/**
 * `npm test`: the static checks and the sample's tests beside the suite, not before it. The suite is paced by
 * redis-servers, child processes, Ruby Sidekiq and Chromium as much as by the CPU, so on 2 cores it leaves idle time that
 * the checks (about 50 s of both cores when run alone) can use. They run at a lower priority (nice 10): a test whose
 * deadline is measured in wall time never waits for a lint. Run one after the other they added their whole length to
 * the run.
 *
 * The dashboard is built first (a few seconds): its tests serve dashboard/dist, which a fresh clone lacks, and its
 * build deletes that folder before writing it again, so it must not run under them.
 *
 * The suite's output streams as it runs; the checks' and the sample's are printed whole when the suite ends, so a
 * failure in any of them is the last thing on screen. The run fails when any of the three failed.
 */
const { spawn } = require('node:child_process');
const { join } = require('node:path');

const root = join(__dirname, '..');

/** `argv` at nice 10 where the platform has `nice`. */
function lowered(argv) {
  return process.platform === 'win32' ? argv : ['nice', '-n', '10', ...argv];
}

/** Runs `argv` to its end; resolves to whether it passed. `keep`: its output is kept and returned, not printed. */
function run(argv, { keep }) {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: root, stdio: keep ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    const output = [];
    if (keep) {
      child.stdout.on('data', (chunk) => output.push(chunk));
      child.stderr.on('data', (chunk) => output.push(chunk));
    }
    // A child that could not start may never close: its error is the answer (a second resolve is ignored).
    child.on('error', (error) => {
      output.push(Buffer.from(`${argv.join(' ')}: ${error.message}\n`));
      resolve({ passed: false, output: Buffer.concat(output) });
    });
    child.on('close', (code) => resolve({ passed: code === 0, output: Buffer.concat(output) }));
  });
}

async function main() {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const dashboard = await run([npm, 'run', '--silent', 'build:dashboard'], { keep: false });
  if (!dashboard.passed) {
    process.stdout.write('\nnpm test failed: the dashboard does not build (npm run build:dashboard)\n');
    process.exitCode = 1;
    return;
  }
  // The checks, then the sample's tests (their own Jest process: see jest.config.js), one after the other.
  const beside = (async () => {
    const checks = await run(lowered([process.execPath, join(__dirname, 'checks.js'), '--skip=dashboard']), {
      keep: true,
    });
    const sample = await run(lowered([npm, 'run', '--silent', 'sample:test']), { keep: true });
    return { checks, sample };
  })();
  const suite = await run([process.execPath, require.resolve('jest/bin/jest'), '--maxWorkers=2'], { keep: false });
  const { checks, sample } = await beside;
  process.stdout.write(`\n> static checks (scripts/checks.js)\n`);
  process.stdout.write(checks.output);
  process.stdout.write(`\n> the sample's tests (npm run sample:test)\n`);
  process.stdout.write(sample.output);
  const failed = [
    ['checks', checks.passed],
    ['sample tests', sample.passed],
    ['suite', suite.passed],
  ].filter(([, passed]) => !passed);
  if (failed.length > 0) {
    process.stdout.write(`\nnpm test failed: ${failed.map(([name]) => name).join(', ')}\n`);
    process.exitCode = 1;
  }
}

void main();
