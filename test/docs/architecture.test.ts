import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './markdown';

/**
 * docs/internals/architecture.md names every top-level folder of src/ in its
 * layer table, and .dependency-cruiser.cjs (the check behind
 * `npm run lint:deps`) gives each a rank: a folder added to src/ without a
 * place in both fails here, even before it imports anything.
 */
const DOC = join(ROOT, 'docs', 'internals', 'architecture.md');

function topLevelFolders(): string[] {
  const src = join(ROOT, 'src');
  return readdirSync(src)
    .filter((entry) => statSync(join(src, entry)).isDirectory())
    .sort();
}

/** The rows of the layer table: `| rank | folders | … |` lines whose first cell is a number. */
function layerRows(): string[] {
  return readFileSync(DOC, 'utf8')
    .split('\n')
    .filter((line) => /^\|\s*\d+\s*\|/.test(line));
}

/** The folders .dependency-cruiser.cjs ranks, read from its `layer-<name>` rules. */
function rankedFolders(): string[] {
  const config = require(join(ROOT, '.dependency-cruiser.cjs')) as { forbidden: { name: string }[] };
  return config.forbidden
    .map((rule) => /^layer-(.+)$/.exec(rule.name)?.[1])
    .filter((name): name is string => name !== undefined);
}

describe('docs/internals/architecture.md', () => {
  it('finds the folders of src/ (the check is not vacuous)', () => {
    expect(topLevelFolders()).toEqual(expect.arrayContaining(['job', 'redis', 'server', 'nest', 'entries']));
  });

  it.each(topLevelFolders())('places src/%s/ in a row of the layer table', (folder) => {
    expect(layerRows().filter((row) => row.includes(`\`src/${folder}/\``))).toHaveLength(1);
  });

  it.each(topLevelFolders())('gives src/%s/ a rank in .dependency-cruiser.cjs', (folder) => {
    expect(rankedFolders()).toContain(folder);
  });

  it('names no folder that src/ no longer has', () => {
    const named = layerRows().flatMap((row) => [...row.matchAll(/`src\/([a-z-]+)\/`/g)].map((match) => match[1]));
    expect([...new Set(named)].sort()).toEqual(topLevelFolders());
  });
});
