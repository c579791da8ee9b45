import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export const ROOT = join(__dirname, '..', '..');

/** Generated output (TypeDoc's) is not ours to check. */
const SKIPPED_DIRS = new Set([join(ROOT, 'docs', 'api')]);

/** README.md, CHANGELOG.md, SECURITY.md and every Markdown file under docs/, as paths relative to the root. */
export function documentationFiles(): string[] {
  const files = ['README.md', 'CHANGELOG.md', 'SECURITY.md'].filter((file) => exists(join(ROOT, file)));
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir).sort()) {
      const path = join(dir, entry);
      if (SKIPPED_DIRS.has(path)) continue;
      if (statSync(path).isDirectory()) walk(path);
      else if (entry.endsWith('.md')) files.push(relative(ROOT, path));
    }
  };
  walk(join(ROOT, 'docs'));
  return files;
}

export function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

export interface CodeBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  language: string;
  /** The words after the language on the fence (`partial`). */
  flags: string[];
  code: string;
}

/** The fenced code blocks of a Markdown text, in order. */
export function codeBlocks(file: string, text: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const open = /^(\s*)(`{3,})\s*([\w-]*)\s*(.*)$/.exec(lines[index]);
    if (!open) continue;
    const [, indent, fence, language, rest] = open;
    const body: string[] = [];
    let end = index + 1;
    while (end < lines.length && !lines[end].startsWith(`${indent}${fence}`))
      body.push(lines[end++].slice(indent.length));
    blocks.push({ file, line: index + 1, language, flags: rest.split(/\s+/).filter(Boolean), code: body.join('\n') });
    index = end;
  }
  return blocks;
}

/** The text outside fenced blocks and inline code spans, where links live. */
export function proseOf(text: string): string {
  const kept: string[] = [];
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const marker = /^\s*(`{3,})/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      kept.push('');
      continue;
    }
    kept.push(fence === undefined ? line.replace(/`[^`]*`/g, '``') : '');
  }
  return kept.join('\n');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
export function slugOf(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor a Markdown file offers, duplicates numbered as GitHub numbers them. */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseOfHeadings(text)) {
    const slug = slugOf(line);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  // Explicit anchors: <a id="bounded-reads"></a>
  for (const match of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
  return anchors;
}

function proseOfHeadings(text: string): string[] {
  const headings: string[] = [];
  let inFence = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    const heading = !inFence && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) headings.push(heading[1]);
  }
  return headings;
}

export function read(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8');
}
