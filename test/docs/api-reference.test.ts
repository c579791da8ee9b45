import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './markdown';

/**
 * `npm run docs` builds the API reference with TypeDoc from the TSDoc of the
 * package entries (typedoc.json). Here TypeDoc runs with its validation on
 * and nothing written: a broken {@link}, a symbol the reference cannot
 * reach, or an exported symbol without documentation fails the test. There
 * is no allow-list: every export of every entry, and every member TypeDoc
 * asks a comment of (methods, function-valued properties), is documented.
 */

/**
 * `[warning] index.Foo (Interface), defined in nestjs-wurk/src/x.ts, does not have any documentation` → `index.Foo
 * (Interface)`.
 */
function undocumentedName(line: string): string | undefined {
  return /^\[warning\] (.+?), defined in .*, does not have any documentation$/.exec(line)?.[1];
}

describe('the API reference (TypeDoc)', () => {
  let lines: string[];

  beforeAll(async () => {
    const typedoc = join(ROOT, 'node_modules', 'typedoc', 'bin', 'typedoc');
    const run = await promisify(execFile)(process.execPath, [typedoc, '--emit', 'none', '--logLevel', 'Warn'], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => ({
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }));
    lines = `${run.stdout}\n${run.stderr}`
      .replace(/\x1b\[[0-9;]*m/g, '')
      .split('\n')
      .map((line) => line.trim())
      .filter(
        (line) =>
          /^\[(warning|error)\]/.test(line) &&
          !/^\[warning\] Found \d+ errors? and \d+ warnings?$/.test(line) &&
          !/^\[error\] Found \d+ errors?/.test(line),
      );
  }, 180_000);

  it('has no broken link, unreachable symbol or error', () => {
    expect(lines.filter((line) => undocumentedName(line) === undefined)).toEqual([]);
  });

  it('documents every exported symbol of the package entries', () => {
    expect(lines.map(undocumentedName).filter((name): name is string => name !== undefined)).toEqual([]);
  });
});
