import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './markdown';

/**
 * `npm run docs` builds the API reference with TypeDoc from the TSDoc of the
 * package entries (typedoc.json). Here TypeDoc runs with its validation on
 * and nothing written: a broken {@link}, a symbol the reference cannot
 * reach, or an exported symbol without documentation fails the test.
 * Undocumented symbols that predate the check are listed in
 * test/docs/undocumented-exports.txt; the list may only shrink.
 */
const BASELINE = join(__dirname, 'undocumented-exports.txt');

/** `[warning] index.Foo (Interface), defined in nestjs-wurk/src/x.ts, does not have any documentation` → `index.Foo (Interface)`. */
function undocumentedName(line: string): string | undefined {
  return /^\[warning\] (.+?), defined in .*, does not have any documentation$/.exec(line)?.[1];
}

describe('the API reference (TypeDoc)', () => {
  let lines: string[];

  beforeAll(async () => {
    const typedoc = join(ROOT, 'node_modules', 'typedoc', 'bin', 'typedoc');
    const run = await promisify(execFile)(process.execPath, [typedoc, '--emit', 'none', '--logLevel', 'Warn'], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' }, maxBuffer: 16 * 1024 * 1024 }).catch(
      (error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }),
    );
    lines = `${run.stdout}\n${run.stderr}`
      .replace(/\x1b\[[0-9;]*m/g, '')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => /^\[(warning|error)\]/.test(line) && !/^\[warning\] Found \d+ errors? and \d+ warnings?$/.test(line) && !/^\[error\] Found \d+ errors?/.test(line));
  }, 180_000);

  it('has no broken link, unreachable symbol or error', () => {
    expect(lines.filter((line) => undocumentedName(line) === undefined)).toEqual([]);
  });

  it('documents every exported symbol of the package entries, but those listed before the check', () => {
    const baseline = new Set(readFileSync(BASELINE, 'utf8').split('\n').filter((line) => line && !line.startsWith('#')));
    const undocumented = lines.map(undocumentedName).filter((name): name is string => name !== undefined);
    expect(undocumented.filter((name) => !baseline.has(name))).toEqual([]);
    // Documented since: take them off the list so they stay documented.
    expect([...baseline].filter((name) => !undocumented.includes(name))).toEqual([]);
  });
});
