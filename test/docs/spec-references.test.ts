import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT } from './markdown';

/**
 * A comment that cites a rule ("docs/internals/spec/contract.md §1.10", "seed 004") must point to a document a
 * reader of this repository can open: the specs the code follows are copied into docs/internals/spec/, the seed
 * rules are restated one per row in docs/seed-rules.md. A citation that names a section the document does not
 * have, or a file that is not in the repository, fails here instead of sending the next engineer to a dead end.
 */

function filesUnder(folder: string, extensions: string[]): string[] {
  return readdirSync(folder).flatMap((entry) => {
    const path = join(folder, entry);
    if (statSync(path).isDirectory()) return filesUnder(path, extensions);
    return extensions.some((extension) => entry.endsWith(extension)) ? [path] : [];
  });
}

const SOURCES = [...filesUnder(join(ROOT, 'src'), ['.ts']), ...filesUnder(join(ROOT, 'lua'), ['.lua'])];

interface Citation {
  file: string;
  line: number;
  text: string;
}

function citations(pattern: RegExp): Citation[] {
  return SOURCES.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((text, index) => (pattern.test(text) ? [{ file: relative(ROOT, file), line: index + 1, text }] : [])),
  );
}

/** The section numbers a spec document's headings carry: `## 4. Periodic jobs` → 4, `### 1.10 Other routes` → 1.10. */
function sectionsOf(document: string): Set<string> {
  const headings = readFileSync(join(ROOT, document), 'utf8').match(/^#+ (\d+(?:\.\d+)*)\.?\s/gm) ?? [];
  return new Set(headings.map((heading) => /(\d+(?:\.\d+)*)/.exec(heading)![1]));
}

/** `1.7.8` is cited as item 8 of section 1.7: the section or the nearest section above it must exist. */
function hasSection(sections: Set<string>, cited: string): boolean {
  const parts = cited.split('.');
  return parts.some((_, end) => sections.has(parts.slice(0, parts.length - end).join('.')));
}

describe('citations in src/ and lua/ point into the repository', () => {
  it('finds citations (the check is not vacuous)', () => {
    expect(citations(/§/).length).toBeGreaterThan(40);
    expect(citations(/seed 00\d/).length).toBeGreaterThan(5);
  });

  it('names the spec document of every § it cites, and the document has that section', () => {
    // `docs/internals/spec/contract.md §1.4, §1.6`: one document, then its sections separated by commas.
    const group = /docs\/internals\/spec\/([a-z-]+\.md) ((?:§\s?\d+(?:\.\d+)*(?:–\d+)?(?:, )?)+)/g;
    const problems = citations(/§/).flatMap(({ file, line, text }) => {
      const groups = [...text.matchAll(group)];
      const placed = groups.reduce((count, [, , sections]) => count + sections.split('§').length - 1, 0);
      const unplaced = text.split('§').length - 1 - placed;
      const missing = groups.flatMap(([, document, sections]) => {
        const path = join('docs', 'internals', 'spec', document);
        if (!existsSync(join(ROOT, path))) return [`${path} does not exist`];
        const known = sectionsOf(path);
        return [...sections.matchAll(/§\s?(\d+(?:\.\d+)*)/g)]
          .filter(([, section]) => !hasSection(known, section))
          .map(([cited]) => `${path} has no ${cited}`);
      });
      return [...(unplaced > 0 ? [`a § that names no document`] : []), ...missing].map(
        (problem) => `${file}:${line}: ${problem}`,
      );
    });
    expect(problems).toEqual([]);
  });

  it('cites seeds through docs/seed-rules.md, which restates that seed', () => {
    const rules = readFileSync(join(ROOT, 'docs', 'seed-rules.md'), 'utf8');
    const wrong = citations(/seed 00\d/i).filter(({ text }) => {
      const seed = /seed (00\d)/i.exec(text)![1];
      return !text.includes('docs/seed-rules.md') || !rules.includes(`## Seed ${seed}`);
    });
    expect(wrong.map(({ file, line, text }) => `${file}:${line}: ${text.trim()}`)).toEqual([]);
  });

  it('names only documents that exist', () => {
    const missing = citations(/docs\/[\w./-]+\.md/).flatMap(({ file, line, text }) =>
      [...text.matchAll(/docs\/[\w./-]+\.md/g)]
        .filter(([path]) => !existsSync(join(ROOT, path)))
        .map(([path]) => `${file}:${line}: ${path}`),
    );
    expect(missing).toEqual([]);
  });
});
