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

/** Every source file with its text and line count, read once. */
const files = sourceFiles(join(ROOT, 'src')).map((path) => {
  const text = readFileSync(path, 'utf8');
  return { file: relative(ROOT, path), text, lines: text.split('\n').length - 1 };
});
const long = files.filter(({ lines }) => lines > LONG);

describe('source file sizes', () => {
  it('finds the source files (the check is not vacuous)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(long.length).toBeGreaterThan(0);
  });

  it.each(long.map(({ file, text }) => [file, text]))('%s is over 400 lines and says why in its header', (_, text) => {
    expect(text.split('\n').slice(0, HEADER_LINES).join('\n')).toContain(REASON);
  });

  it('keeps each piece of the reliable fetch under 250 lines', () => {
    const pieces = files.filter(({ file }) => file.startsWith('src/server/fetch/reliable/'));
    expect(pieces.length).toBeGreaterThan(5);
    const over = pieces.filter(({ lines }) => lines >= 250).map(({ file, lines }) => `${file}: ${lines}`);
    expect(over).toEqual([]);
  });
});
