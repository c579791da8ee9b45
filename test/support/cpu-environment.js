/**
 * Jest's node environment, also writing what each test file cost in CPU: the Jest worker's own time (its threads:
 * heartbeats, sandboxes) and its reaped children's (redis-servers, Chromium, Ruby, worker processes), read from
 * /proc/self/stat around the file. Wall time alone misleads on a shared machine: a file that waits on timers looks as
 * long as one that burns both cores. For the suite's time budget (docs/internals/test-suite.md):
 *
 *   WURK_SUITE_CPU=/tmp/suite-cpu.tsv npx jest --testEnvironment=./test/support/cpu-environment.js
 *
 * One line per file: own CPU s, children's CPU s, wall s, path. Linux only.
 */
const { TestEnvironment } = require('jest-environment-node');
const { appendFileSync, readFileSync } = require('node:fs');
const { relative } = require('node:path');

const TICKS_PER_SECOND = 100;

/** utime + stime and cutime + cstime of this process, in clock ticks (proc(5), fields 14-17). */
function cpuTicks() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // The command name (field 2) may hold spaces: count from the parenthesis that closes it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { own: Number(fields[11]) + Number(fields[12]), children: Number(fields[13]) + Number(fields[14]) };
}

class CpuAccountingEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = relative(config.projectConfig.rootDir, context.testPath);
  }

  async setup() {
    this.began = { ticks: cpuTicks(), at: Date.now() };
    await super.setup();
  }

  async teardown() {
    await super.teardown();
    const out = process.env.WURK_SUITE_CPU;
    if (!out) return;
    const ticks = cpuTicks();
    const seconds = (from, to) => ((to - from) / TICKS_PER_SECOND).toFixed(1);
    const wall = ((Date.now() - this.began.at) / 1000).toFixed(1);
    const own = seconds(this.began.ticks.own, ticks.own);
    const children = seconds(this.began.ticks.children, ticks.children);
    appendFileSync(out, `${own}\t${children}\t${wall}\t${this.testPath}\n`);
  }
}

module.exports = CpuAccountingEnvironment;
