import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT } from './markdown';

/**
 * The house's size rules (docs/internals/architecture.md), kept by a test
 * rather than by review: a source file over 400 lines says why in its
 * header, and the pieces of the reliable fetch stay small enough to read in
 * one sitting (each under 250 lines: the reason they were split).
 */
const LONG = 400;
const REASON = 'Why over 400 lines:';
/** How far into a file its header may run. */
const HEADER_LINES = 120;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) return sourceFiles(path);
      return entry.endsWith('.ts') ? [path] : [];
    });
}

const lineCount = (path: string) => readFileSync(path, 'utf8').split('\n').length - 1;
const files = sourceFiles(join(ROOT, 'src'));

describe('source file sizes', () => {
  it('finds the source files (the check is not vacuous)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.filter((path) => lineCount(path) > LONG).length).toBeGreaterThan(0);
  });

  it.each(files.filter((path) => lineCount(path) > LONG).map((path) => relative(ROOT, path)))(
    '%s is over 400 lines and says why in its header',
    (file) => {
      const header = readFileSync(join(ROOT, file), 'utf8').split('\n').slice(0, HEADER_LINES).join('\n');
      expect(header).toContain(REASON);
    },
  );

  it('keeps each piece of the reliable fetch under 250 lines', () => {
    const pieces = sourceFiles(join(ROOT, 'src', 'server', 'fetch', 'reliable'));
    expect(pieces.length).toBeGreaterThan(5);
    const over = pieces
      .filter((path) => lineCount(path) >= 250)
      .map((path) => `${relative(ROOT, path)}: ${lineCount(path)}`);
    expect(over).toEqual([]);
  });
});
