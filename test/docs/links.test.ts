import { dirname, join, normalize, relative } from 'node:path';
import { anchorsOf, documentationFiles, exists, proseOf, read, ROOT } from './markdown';

/**
 * Files other branches add; a link to one is allowed while it is missing.
 * docs/internals/architecture.md is written with the layering work.
 */
const LANDING_ELSEWHERE = new Set(['docs/internals/architecture.md']);

interface Link {
  file: string;
  line: number;
  target: string;
}

/** Inline links and images: `[text](target)` and `![alt](target)`, outside code. */
function linksOf(file: string): Link[] {
  const links: Link[] = [];
  proseOf(read(file))
    .split('\n')
    .forEach((line, index) => {
      for (const match of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
        links.push({ file, line: index + 1, target: match[1] });
    });
  return links;
}

/** What is wrong with a link, or undefined when it resolves. */
function brokenReason(link: Link): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) return undefined; // http(s), mailto: checked by no test (no network)
  const [path, anchor] = link.target.split('#', 2);
  const resolved = path === '' ? link.file : normalize(join(dirname(link.file), decodeURIComponent(path)));
  if (resolved.startsWith('..')) return `points outside the repository (${resolved})`;
  if (!exists(join(ROOT, resolved))) return LANDING_ELSEWHERE.has(resolved) ? undefined : `no file ${resolved}`;
  if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(read(resolved)).has(anchor))
    return `no heading #${anchor} in ${resolved}`;
  return undefined;
}

describe('links in README.md and docs/', () => {
  const files = documentationFiles();

  it('finds the documentation', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'README.md',
        'docs/getting-started.md',
        'docs/configuration.md',
        'docs/internals/benchmarks.md',
      ]),
    );
  });

  it('resolve: every relative link names a file that exists, and every anchor a heading of it', () => {
    const broken = files
      .flatMap(linksOf)
      .map((link) => ({ link, reason: brokenReason(link) }))
      .filter((entry) => entry.reason !== undefined)
      .map(({ link, reason }) => `${link.file}:${link.line} ${link.target}: ${reason}`);
    expect(broken).toEqual([]);
  });

  it('every guide is reachable from the README or the guide index', () => {
    const linked = new Set(
      ['README.md', 'docs/README.md', 'docs/internals/README.md'].flatMap((file) =>
        linksOf(file).map((link) => relative('.', normalize(join(dirname(file), link.target.split('#')[0])))),
      ),
    );
    const orphans = files.filter(
      (file) =>
        file.startsWith('docs/') && !linked.has(file) && !file.endsWith('/README.md') && file !== 'docs/README.md',
    );
    expect(orphans).toEqual([]);
  });
});
