import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const PAGE = readFileSync(join(ROOT, 'docs', 'seed-rules.md'), 'utf8');

/** The table rows of the page: lines that start with `|` and are neither a header nor a separator. */
function rows(): string[][] {
  return PAGE.split('\n')
    .filter(
      (line) =>
        line.startsWith('| ') &&
        !line.startsWith('| ---') &&
        !line.startsWith('| #') &&
        !line.startsWith('| Seed rule'),
    )
    .map((line) => line.split(' | ').map((cell) => cell.replace(/^\| |\s*\|$/g, '')));
}

/** Backticked repository paths in a cell: `test/…`, `src/…`, `lua/…`. */
function paths(cell: string): string[] {
  return [...cell.matchAll(/`((?:test|src|lua)\/[^`]+)`/g)].map((match) => match[1]);
}

describe('docs/seed-rules.md', () => {
  it('pins every rule with at least one test file, and every file it names exists', () => {
    const all = rows();
    // One row per checkable statement of the seeds (165 when written): a floor, so merging rows back into compound
    // ones, or dropping a seed's section, fails here rather than passing as a shorter table.
    expect(all.filter((row) => /^\d{3}\.\d+$/.test(row[0])).length).toBeGreaterThanOrEqual(150);
    const missing: string[] = [];
    for (const row of all) {
      const tests = paths(row[row.length - 1]).filter((path) => path.startsWith('test/'));
      if (tests.length === 0) missing.push(`${row[0]}: no test named`);
      for (const path of row.flatMap(paths))
        if (!existsSync(join(ROOT, path))) missing.push(`${row[0]}: ${path} does not exist`);
    }
    expect(missing).toEqual([]);
  });

  it('numbers the rules of each seed without a gap or a repeat', () => {
    const numbers = rows()
      .map((row) => row[0])
      .filter((id) => /^\d{3}\.\d+$/.test(id));
    expect(new Set(numbers).size).toBe(numbers.length);
    for (const seed of ['000', '001', '004']) {
      const own = numbers.filter((id) => id.startsWith(`${seed}.`)).map((id) => Number(id.split('.')[1]));
      expect(own).toEqual(own.map((_, index) => index + 1));
    }
  });

  it('lists periodic.newEntryGrace among the documented deviations', () => {
    const deviations = PAGE.slice(PAGE.indexOf('## Documented deviations'));
    expect(deviations).toContain('`periodic.newEntryGrace`');
  });
});
