/**
 * `npm run mutate:lua [script ...]`: mutation testing for `lua/*.lua`.
 *
 * For each mutant of a script it rewrites the file in place, runs the test
 * files that load that script (Jest's dependency graph from the TypeScript
 * that calls it), and restores the file. A mutant is killed when any of those
 * tests fails or the run times out. Killed mutants are remembered by the hash
 * of their source, so a re-run only re-tests survivors and changed lines.
 *
 * Survivors that no test could ever notice are listed with a reason in
 * `lua-equivalent.json` and left out of the score.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { LuaMutant, mutantsOf } from './lua-mutants';

const ROOT = join(__dirname, '..', '..');
const LUA_DIR = join(ROOT, 'lua');
const REPORT_DIR = join(ROOT, 'reports', 'mutation');
const CACHE_FILE = join(REPORT_DIR, 'lua-killed.json');
const EQUIVALENT_FILE = join(__dirname, 'lua-equivalent.json');
const SEQUENCER = join(__dirname, 'ordered-sequencer.js');

type Outcome = 'killed' | 'timeout' | 'survived' | 'equivalent';

interface MutantResult {
  id: string;
  line: number;
  description: string;
  outcome: Outcome;
  killer?: string;
  reason?: string;
}

interface TestRun {
  passed: boolean;
  timedOut: boolean;
  failedFile?: string;
  durations: Map<string, number>;
}

function sha(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

function readJson<T>(file: string, fallback: T): T {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : fallback;
}

/** The TypeScript files that run a script: they name it as a string literal. */
function callersOf(script: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (path.endsWith('.ts') && readFileSync(path, 'utf8').includes(`runScript`) && readFileSync(path, 'utf8').includes(`'${script}'`)) {
        found.push(path);
      }
    }
  };
  walk(join(ROOT, 'src'));
  return found;
}

function relatedTests(script: string): string[] {
  const callers = callersOf(script);
  if (callers.length === 0) return [];
  const listed = spawnSync('npx', ['jest', '--listTests', '--findRelatedTests', ...callers], { cwd: ROOT, encoding: 'utf8' });
  return listed.stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.endsWith('.test.ts'))
    .sort();
}

function runTests(files: string[], order: string[], timeoutMs: number, bail: boolean): TestRun {
  const output = join(REPORT_DIR, 'jest-run.json');
  const args = ['jest', '--json', `--outputFile=${output}`, '--maxWorkers=1', '--silent', `--testSequencer=${SEQUENCER}`];
  if (bail) args.push('--bail=1');
  const run = spawnSync('npx', [...args, ...files], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
    env: { ...process.env, WURK_MUTATION_ORDER: JSON.stringify(order) },
  });
  const durations = new Map<string, number>();
  if (run.error || run.signal) return { passed: false, timedOut: true, durations };
  let failedFile: string | undefined;
  try {
    const report = JSON.parse(readFileSync(output, 'utf8')) as {
      testResults: Array<{ name: string; status: string; startTime: number; endTime: number }>;
    };
    for (const result of report.testResults) {
      durations.set(result.name, result.endTime - result.startTime);
      if (result.status === 'failed' && !failedFile) failedFile = result.name;
    }
  } catch {
    // No report: Jest itself failed (a syntax error in a test run counts as a kill).
  }
  return { passed: run.status === 0, timedOut: false, failedFile, durations };
}

function mutateScript(script: string, killedCache: Record<string, string>, equivalent: Record<string, string>): MutantResult[] {
  const file = join(LUA_DIR, `${script}.lua`);
  const original = readFileSync(file, 'utf8');
  const tests = relatedTests(script);
  if (tests.length === 0) throw new Error(`no test loads lua/${script}.lua: every script needs one`);
  console.log(`\n${script}.lua: ${tests.length} related test file(s)`);

  const baseline = runTests(tests, tests, 30 * 60_000, false);
  if (!baseline.passed) throw new Error(`the tests of lua/${script}.lua fail on the unmutated script (${baseline.failedFile ?? 'timeout'})`);
  const baselineMs = [...baseline.durations.values()].reduce((sum, ms) => sum + ms, 0);
  const timeoutMs = Math.max(60_000, baselineMs * 3 + 30_000);
  // Fast files first, and any file that already killed a mutant of this script before them.
  const killers: string[] = [];
  const byDuration = [...tests].sort((a, b) => (baseline.durations.get(a) ?? 0) - (baseline.durations.get(b) ?? 0));

  const results: MutantResult[] = [];
  const mutants = mutantsOf(script, original);
  try {
    for (const mutant of mutants) results.push(runMutant(mutant));
  } finally {
    writeFileSync(file, original);
  }
  return results;

  function runMutant(mutant: LuaMutant): MutantResult {
    const base = { id: mutant.id, line: mutant.line, description: mutant.description };
    if (equivalent[mutant.id]) return { ...base, outcome: 'equivalent', reason: equivalent[mutant.id] };
    const key = sha(mutant.source);
    if (killedCache[key]) return { ...base, outcome: 'killed', killer: killedCache[key] };
    writeFileSync(file, mutant.source);
    const order = [...killers, ...byDuration.filter((test) => !killers.includes(test))];
    const run = runTests(tests, order, timeoutMs, true);
    writeFileSync(file, original);
    if (run.passed) {
      console.log(`  survived ${mutant.id}  ${mutant.description}`);
      return { ...base, outcome: 'survived' };
    }
    const killer = run.timedOut ? 'timeout' : relative(ROOT, run.failedFile ?? 'jest');
    if (run.failedFile && !killers.includes(run.failedFile)) killers.unshift(run.failedFile);
    killedCache[key] = killer;
    writeFileSync(CACHE_FILE, JSON.stringify(killedCache, null, 1));
    return { ...base, outcome: run.timedOut ? 'timeout' : 'killed', killer };
  }
}

function main(): void {
  mkdirSync(REPORT_DIR, { recursive: true });
  const wanted = process.argv.slice(2);
  const scripts = readdirSync(LUA_DIR)
    .filter((name) => name.endsWith('.lua'))
    .map((name) => name.slice(0, -4))
    .filter((name) => wanted.length === 0 || wanted.includes(name));
  const killedCache = readJson<Record<string, string>>(CACHE_FILE, {});
  const equivalent = readJson<Record<string, string>>(EQUIVALENT_FILE, {});

  const summary: Array<{ script: string; results: MutantResult[] }> = [];
  for (const script of scripts) summary.push({ script, results: mutateScript(script, killedCache, equivalent) });

  console.log('\n| script | mutants | killed | survived | equivalent | score |\n|---|---|---|---|---|---|');
  let detected = 0;
  let counted = 0;
  for (const { script, results } of summary) {
    const killed = results.filter((r) => r.outcome === 'killed' || r.outcome === 'timeout').length;
    const survived = results.filter((r) => r.outcome === 'survived').length;
    const equivalents = results.filter((r) => r.outcome === 'equivalent').length;
    detected += killed;
    counted += killed + survived;
    const score = killed + survived === 0 ? 100 : (100 * killed) / (killed + survived);
    console.log(`| ${script}.lua | ${results.length} | ${killed} | ${survived} | ${equivalents} | ${score.toFixed(1)} % |`);
  }
  console.log(`\nLua mutation score: ${counted === 0 ? '100.0' : ((100 * detected) / counted).toFixed(1)} % (${detected} of ${counted}, equivalents left out)`);
  const survivors = summary.flatMap(({ results }) => results.filter((r) => r.outcome === 'survived'));
  if (survivors.length > 0) {
    console.log('\nSurvivors (kill with a test, or list in test/mutation/lua-equivalent.json with a reason):');
    for (const survivor of survivors) console.log(`  ${survivor.id}  ${survivor.description}`);
  }
  writeFileSync(join(REPORT_DIR, 'lua.json'), JSON.stringify(summary, null, 2));
}

main();
