/**
 * `npm run mutate:lua [--quick] [script ...]`: mutation testing for `lua/*.lua`.
 *
 * For each mutant of a script it rewrites the file in place, runs the
 * script's curated test files (lua-test-map.ts) one Jest and one file at a
 * time, fastest first, stopping at the first that fails, and restores the
 * file. A mutant those let through is run against every test Jest's
 * dependency graph relates to the script's callers before it is called a
 * survivor (`--quick` skips that and marks it unconfirmed).
 * A mutant is killed when a test fails, timed out when the run outlives its
 * deadline (a mutant that loops inside Redis). Killed mutants are remembered
 * by the hash of their source, so a re-run only re-tests the rest.
 *
 * Survivors that no test could ever notice are listed with a reason in
 * `lua-equivalent.json` and left out of the score.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CURATED_TESTS } from './lua-test-map';
import { mutantsOf } from './lua-mutants';

const ROOT = join(__dirname, '..', '..');
const LUA_DIR = join(ROOT, 'lua');
const REPORT_DIR = join(ROOT, 'reports', 'mutation');
const CACHE_FILE = join(REPORT_DIR, 'lua-killed.json');
// The original of the script being mutated, written before the first
// mutant: a run killed with SIGKILL (no handler runs) is undone at the next start.
const JOURNAL_FILE = join(REPORT_DIR, 'lua-restore.json');
const EQUIVALENT_FILE = join(__dirname, 'lua-equivalent.json');
const JEST = join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
const CAPPED_REDIS = join(__dirname, 'capped-redis-server.sh');
// Left out of the wider tier: they need a built dashboard and Chromium, or
// spend most of a minute on a Sentinel failover, and pin no script rule that
// a faster related test does not.
const NOT_IN_WIDER_TIER = ['test/e2e/dashboard.browser.test.ts', 'test/chaos/sentinel-failover.test.ts'];

type Outcome = 'killed' | 'timeout' | 'survived' | 'unconfirmed' | 'equivalent';

interface MutantResult {
  id: string;
  line: number;
  description: string;
  outcome: Outcome;
  killer?: string;
  reason?: string;
  ms?: number;
}

interface TestRun {
  passed: boolean;
  timedOut: boolean;
  failedFile?: string;
  durations: Map<string, number>;
}

interface Journal {
  file: string;
  original: string;
}

function sha(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

function readJson<T>(file: string, fallback: T): T {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : fallback;
}

// ---------------------------------------------------------------- restoring

let journal: Journal | undefined;
let running: ChildProcess | undefined;

function mutate(file: string, source: string): void {
  if (!journal) {
    journal = { file, original: readFileSync(file, 'utf8') };
    writeFileSync(JOURNAL_FILE, JSON.stringify(journal));
  }
  writeFileSync(file, source);
}

function restore(): void {
  if (!journal) return;
  writeFileSync(journal.file, journal.original);
  journal = undefined;
  rmSync(JOURNAL_FILE, { force: true });
}

/** Undoes a run that was killed before it could restore its script. */
function restoreLeftover(): void {
  const left = readJson<Journal | null>(JOURNAL_FILE, null);
  if (!left) return;
  if (readFileSync(left.file, 'utf8') !== left.original)
    console.log(`restored ${relative(ROOT, left.file)} left mutated by an interrupted run`);
  journal = left;
  restore();
}

/** Jest runs in its own process group, so its redis-servers (and a Lua loop they run) die with it. */
function killRunning(): void {
  if (running?.pid) {
    try {
      process.kill(-running.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

function guardExit(): void {
  process.on('exit', () => {
    killRunning();
    restore();
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      console.log(
        `\n${signal}: stopping, ${journal ? `restoring ${relative(ROOT, journal.file)}` : 'nothing to restore'}`,
      );
      process.exit(130);
    });
  }
}

// ---------------------------------------------------------------- test runs

/** The scripts whose source includes `include/<name>` (a `-- #include <name>` line), directly or through another. */
function includersOf(script: string): string[] {
  const name = script.slice('include/'.length);
  const includes = (file: string) => readFileSync(file, 'utf8').includes(`-- #include ${name}\n`);
  const direct = [
    ...readdirSync(LUA_DIR)
      .filter((file) => file.endsWith('.lua') && includes(join(LUA_DIR, file)))
      .map((file) => file.slice(0, -4)),
    ...readdirSync(join(LUA_DIR, 'include'))
      .filter((file) => file.endsWith('.lua') && includes(join(LUA_DIR, 'include', file)))
      .flatMap((file) => includersOf(`include/${file.slice(0, -4)}`)),
  ];
  return [...new Set(direct)];
}

/**
 * The TypeScript files that run a script: they name it as a string literal (an include: those of every script that
 * includes it).
 */
function callersOf(script: string): string[] {
  if (script.startsWith('include/')) return [...new Set(includersOf(script).flatMap(callersOf))];
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (path.endsWith('.ts')) {
        const text = readFileSync(path, 'utf8');
        if (text.includes('runScript') && text.includes(`'${script}'`)) found.push(path);
      }
    }
  };
  walk(join(ROOT, 'src'));
  return found;
}

function relatedTests(script: string): string[] {
  const callers = callersOf(script);
  if (callers.length === 0) return [];
  const listed = spawnSync(process.execPath, [JEST, '--listTests', '--findRelatedTests', ...callers], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return listed.stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.endsWith('.test.ts') && !NOT_IN_WIDER_TIER.includes(relative(ROOT, line)))
    .sort();
}

function curatedTests(script: string): string[] {
  return (CURATED_TESTS[script] ?? []).map((path) => join(ROOT, path)).filter((path) => existsSync(path));
}

interface FileRun {
  passed: boolean;
  timedOut: boolean;
  ms: number;
}

/**
 * One Jest for one test file. Jest 30's --bail does not stop an in-band run
 * after a failed file (every file still ran, 40 s where 2 s would do), so
 * the runner runs the files one by one and stops itself.
 */
async function runFile(file: string, timeoutMs: number): Promise<FileRun> {
  const started = Date.now();
  const child = spawn(process.execPath, [JEST, '--maxWorkers=1', '--silent', '--bail=1', file], {
    cwd: ROOT,
    stdio: 'ignore',
    detached: true,
    env: {
      ...process.env,
      REDIS_SERVER: CAPPED_REDIS,
      WURK_MUTATION_REDIS_BINARY: process.env.REDIS_SERVER || 'redis-server',
    },
  });
  running = child;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killRunning();
  }, timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (status) => resolve(status)));
  clearTimeout(timer);
  // A redis-server left spinning in a mutant's endless loop outlives Jest
  // (its stop() waits for an exit that never comes): the group goes too.
  killRunning();
  running = undefined;
  // Any failure counts, Jest's own included (a script that no longer loads fails every test that runs it).
  return { passed: !timedOut && code === 0, timedOut, ms: Date.now() - started };
}

interface TestRun {
  passed: boolean;
  timedOut: boolean;
  failedFile?: string;
  durations: Map<string, number>;
}

async function runTests(order: string[], deadlines: Map<string, number> | undefined, bail: boolean): Promise<TestRun> {
  const durations = new Map<string, number>();
  let failed: { file: string; timedOut: boolean } | undefined;
  for (const file of order) {
    const run = await runFile(file, deadlines?.get(file) ?? 30 * 60_000);
    durations.set(file, run.ms);
    if (!run.passed) {
      failed ??= { file, timedOut: run.timedOut };
      if (bail) break;
    }
  }
  return { passed: !failed, timedOut: failed?.timedOut ?? false, failedFile: failed?.file, durations };
}

/** A file's deadline: three times its unmutated run and then some, so a load spike on a shared machine is no kill. */
function deadlinesOf(run: TestRun): Map<string, number> {
  return new Map([...run.durations].map(([file, ms]) => [file, Math.max(30_000, ms * 3 + 20_000)]));
}

// ---------------------------------------------------------------- mutants

interface Tier {
  files: string[];
  /** Fastest first, measured on the unmutated script. */
  order: string[];
  deadlines: Map<string, number>;
}

async function mutateScript(
  script: string,
  killedCache: Record<string, string>,
  equivalent: Record<string, string>,
  quick: boolean,
  lines: (line: number) => boolean,
): Promise<MutantResult[]> {
  const file = join(LUA_DIR, `${script}.lua`);
  const original = readFileSync(file, 'utf8');
  const related = relatedTests(script);
  const curated = curatedTests(script);
  if (curated.length === 0 && related.length === 0)
    throw new Error(`no test loads lua/${script}.lua: every script needs one`);
  const mutants = mutantsOf(script, original).filter((mutant) => lines(mutant.line));
  const pending = mutants.filter((mutant) => !equivalent[mutant.id] && !killedCache[sha(mutant.source)]);
  console.log(
    `\n${script}.lua: ${mutants.length} mutants, ${pending.length} to run; ${curated.length} curated, ${related.length} related test files`,
  );

  const killers: string[] = [];
  let first: Tier | undefined;
  let wide: Tier | undefined;
  const tierOf = async (files: string[], name: string): Promise<Tier> => {
    const baseline = await runTests(files, undefined, false);
    if (!baseline.passed)
      throw new Error(`the ${name} tests of lua/${script}.lua fail on the unmutated script (${baseline.failedFile})`);
    const order = [...files].sort((a, b) => baseline.durations.get(a)! - baseline.durations.get(b)!);
    return { files, order, deadlines: deadlinesOf(baseline) };
  };
  // A file that killed a mutant of this script is likeliest to kill the next: it goes first.
  const ordered = (tier: Tier): string[] => [
    ...killers.filter((k) => tier.files.includes(k)),
    ...tier.order.filter((test) => !killers.includes(test)),
  ];
  const run = async (tier: Tier): Promise<TestRun> => {
    const result = await runTests(ordered(tier), tier.deadlines, true);
    if (result.failedFile && !killers.includes(result.failedFile)) killers.unshift(result.failedFile);
    return result;
  };

  const results: MutantResult[] = [];
  for (const mutant of mutants) {
    const base = { id: mutant.id, line: mutant.line, description: mutant.description };
    if (equivalent[mutant.id]) {
      results.push({ ...base, outcome: 'equivalent', reason: equivalent[mutant.id] });
      continue;
    }
    const key = sha(mutant.source);
    if (killedCache[key]) {
      const killer = killedCache[key];
      results.push({ ...base, outcome: killer === 'timeout' ? 'timeout' : 'killed', killer });
      continue;
    }
    const started = Date.now();
    let outcome: Outcome;
    let killer: string | undefined;
    try {
      if (curated.length > 0) first ??= await tierOf(curated, 'curated');
      mutate(file, mutant.source);
      let result = curated.length > 0 ? await run(first!) : undefined;
      if (!result || result.passed) {
        const rest = related.filter((test) => !curated.includes(test));
        if (!quick && rest.length > 0) {
          restore();
          wide ??= await tierOf(rest, 'related');
          mutate(file, mutant.source);
          result = await run(wide);
        }
      }
      if (result!.passed)
        outcome = quick && related.some((test) => !curated.includes(test)) ? 'unconfirmed' : 'survived';
      else {
        outcome = result!.timedOut ? 'timeout' : 'killed';
        killer = result!.timedOut ? 'timeout' : relative(ROOT, result!.failedFile ?? 'jest');
        killedCache[key] = killer;
        writeFileSync(CACHE_FILE, JSON.stringify(killedCache, null, 1));
      }
    } finally {
      restore();
    }
    const ms = Date.now() - started;
    console.log(
      `  ${outcome.padEnd(11)} ${mutant.id.padEnd(42)} ${(ms / 1000).toFixed(1).padStart(6)} s  ${killer ?? mutant.description}`,
    );
    results.push({ ...base, outcome, killer, ms });
  }
  if (readFileSync(file, 'utf8') !== original) throw new Error(`lua/${script}.lua was not restored`);
  return results;
}

// ---------------------------------------------------------------- summary

function count(results: MutantResult[], ...outcomes: Outcome[]): number {
  return results.filter((r) => outcomes.includes(r.outcome)).length;
}

function printSummary(summary: Array<{ script: string; results: MutantResult[] }>, elapsedMs: number): void {
  console.log(
    '\n| script | mutants | killed | timed out | survived | equivalent | score |\n|---|---|---|---|---|---|---|',
  );
  const all = summary.flatMap(({ results }) => results);
  const score = (results: MutantResult[]): string => {
    const detected = count(results, 'killed', 'timeout');
    const counted = results.length - count(results, 'equivalent');
    return counted === 0 ? '100.0' : ((100 * detected) / counted).toFixed(1);
  };
  for (const { script, results } of [...summary, { script: 'total', results: all }]) {
    const survived = count(results, 'survived', 'unconfirmed');
    const name = script === 'total' ? '**total**' : `${script}.lua`;
    console.log(
      `| ${name} | ${results.length} | ${count(results, 'killed')} | ${count(results, 'timeout')} | ${survived} | ${count(results, 'equivalent')} | ${score(results)} % |`,
    );
  }
  console.log(`\nLua mutation score: ${score(all)} % (equivalents left out), ${(elapsedMs / 60000).toFixed(1)} min`);
  const survivors = all.filter((r) => r.outcome === 'survived' || r.outcome === 'unconfirmed');
  if (survivors.length > 0) {
    console.log('\nSurvivors (kill with a test, or list in test/mutation/lua-equivalent.json with a reason):');
    for (const survivor of survivors)
      console.log(
        `  ${survivor.id}  ${survivor.outcome === 'unconfirmed' ? '(curated tests only) ' : ''}${survivor.description}`,
      );
  }
}

/** `--lines=101-115,130`: only the mutants of those lines (a changed part of one script), every line when absent. */
function lineFilter(spec: string | undefined): (line: number) => boolean {
  if (spec === undefined) return () => true;
  const ranges = spec.split(',').map((part) => {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!match) throw new Error(`--lines: ${JSON.stringify(part)} is not a line or a range like 101-115`);
    return [Number(match[1]), Number(match[2] ?? match[1])] as const;
  });
  return (line) => ranges.some(([from, to]) => line >= from && line <= to);
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  mkdirSync(REPORT_DIR, { recursive: true });
  guardExit();
  restoreLeftover();
  const argv = process.argv.slice(2);
  const quick = argv.includes('--quick');
  const wanted = argv.filter((arg) => !arg.startsWith('--'));
  const lines = lineFilter(argv.find((arg) => arg.startsWith('--lines='))?.slice('--lines='.length));
  // Includes are mutated too (`include/<name>`), against the tests of the scripts that include them.
  const scripts = [
    ...readdirSync(LUA_DIR).filter((name) => name.endsWith('.lua')),
    ...readdirSync(join(LUA_DIR, 'include'))
      .filter((name) => name.endsWith('.lua'))
      .map((name) => `include/${name}`),
  ]
    .map((name) => name.slice(0, -4))
    .filter((name) => wanted.length === 0 || wanted.includes(name));
  const killedCache = readJson<Record<string, string>>(CACHE_FILE, {});
  const equivalent = readJson<Record<string, string>>(EQUIVALENT_FILE, {});

  const summary: Array<{ script: string; results: MutantResult[] }> = [];
  for (const script of scripts) {
    summary.push({ script, results: await mutateScript(script, killedCache, equivalent, quick, lines) });
    writeFileSync(join(REPORT_DIR, 'lua.json'), JSON.stringify(summary, null, 2));
  }
  printSummary(summary, Date.now() - startedAt);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
