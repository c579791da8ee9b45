/**
 * The mutants of one Lua script: small, plausible mistakes a test suite must
 * notice. Stryker cannot reach `lua/`, and the scripts are where a job's fate
 * is decided atomically, so a broken comparison there loses jobs in silence.
 *
 * Each mutant changes exactly one spot of one line, so a survivor points at
 * the rule that no test pins.
 */
export interface LuaMutant {
  /** Stable across runs while the line is unchanged: `<script>:<line>:<operator>:<column>`. */
  id: string;
  script: string;
  line: number;
  operator: string;
  description: string;
  source: string;
}

interface Replacement {
  operator: string;
  pattern: RegExp;
  replace: (match: string) => string;
}

// Longest tokens first, so `<=` is never read as `<` followed by `=`.
const COMPARISONS: Record<string, string> = { '==': '~=', '~=': '==', '<=': '<', '>=': '>', '<': '<=', '>': '>=' };

const REPLACEMENTS: Replacement[] = [
  { operator: 'comparison', pattern: /==|~=|<=|>=|<(?!<)|>(?!>)/g, replace: (m) => COMPARISONS[m] },
  { operator: 'logical', pattern: /\band\b|\bor\b/g, replace: (m) => (m === 'and' ? 'or' : 'and') },
  { operator: 'negation', pattern: /\bnot /g, replace: () => '' },
  // A constant moved by one: off-by-one limits, counts and ranks. KEYS[n] and
  // ARGV[n] indexes are left alone: a wrong index breaks every call at once,
  // which any test of the script notices, and would only inflate the count.
  {
    operator: 'constant',
    pattern: /(?<![\w.[])\d+(?![\w.\]])/g,
    replace: (m) => String(Number(m) === 1 ? 0 : Number(m) + 1),
  },
  { operator: 'boolean', pattern: /\btrue\b|\bfalse\b/g, replace: (m) => (m === 'true' ? 'false' : 'true') },
];

/** Code part of a line: strings and `--` comments are never mutated. */
function codeSpans(line: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let start = 0;
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) {
        quote = null;
        start = i + 1;
      }
      continue;
    }
    if (ch === '"' || ch === "'") {
      spans.push([start, i]);
      quote = ch;
    } else if (ch === '-' && line[i + 1] === '-') {
      spans.push([start, i]);
      return spans;
    }
  }
  if (!quote) spans.push([start, line.length]);
  return spans;
}

/** Where a `--` comment starts outside strings, or -1. */
function commentStart(line: string): number {
  const spans = codeSpans(line);
  const end = spans.length === 0 ? 0 : spans[spans.length - 1][1];
  return line.startsWith('--', end) ? end : -1;
}

function inSpans(index: number, spans: Array<[number, number]>): boolean {
  return spans.some(([from, to]) => index >= from && index < to);
}

/** A statement that only writes: dropping it is the mutant "forgot a write". */
function isDroppableCall(code: string): boolean {
  return /^\s*redis\.call\(/.test(code);
}

/**
 * Per line, the part that is inside a `--[[ ... ]]` block comment (a
 * multi-line header, as in status_write.lua): blanked, so its prose is never
 * mutated. Text after the closing `]]` stays code.
 */
function blankBlockComments(lines: string[]): string[] {
  let inside = false;
  return lines.map((line) => {
    let out = '';
    let rest = line;
    for (;;) {
      if (inside) {
        const close = rest.indexOf(']]');
        if (close === -1) return out + ' '.repeat(rest.length);
        out += ' '.repeat(close + 2);
        rest = rest.slice(close + 2);
        inside = false;
      }
      const open = commentStart(rest);
      if (open === -1 || !rest.startsWith('--[[', open)) return out + rest;
      out += rest.slice(0, open) + '    ';
      rest = rest.slice(open + 4);
      inside = true;
    }
  });
}

export function mutantsOf(script: string, source: string): LuaMutant[] {
  const lines = source.split('\n');
  const code = blankBlockComments(lines);
  const mutants: LuaMutant[] = [];
  const add = (line: number, operator: string, column: number, description: string, mutatedLine: string): void => {
    const copy = lines.slice();
    copy[line] = mutatedLine;
    mutants.push({
      id: `${script}:${line + 1}:${operator}:${column}`,
      script,
      line: line + 1,
      operator,
      description,
      source: copy.join('\n'),
    });
  };
  lines.forEach((text, index) => {
    const spans = codeSpans(code[index]);
    if (spans.every(([from, to]) => code[index].slice(from, to).trim() === '')) return;
    for (const { operator, pattern, replace } of REPLACEMENTS) {
      for (const match of text.matchAll(pattern)) {
        const at = match.index ?? 0;
        if (!inSpans(at, spans)) continue;
        const replacement = replace(match[0]);
        const mutated = text.slice(0, at) + replacement + text.slice(at + match[0].length);
        add(index, operator, at, `\`${match[0]}\` → \`${replacement || '(removed)'}\``, mutated);
      }
    }
    if (isDroppableCall(code[index])) add(index, 'drop-call', 0, `dropped \`${text.trim()}\``, `-- mutant: ${text}`);
    const returned = /\breturn (0|1)\b/.exec(text);
    if (returned && inSpans(returned.index, spans)) {
      const flipped = returned[1] === '0' ? '1' : '0';
      add(
        index,
        'return',
        returned.index,
        `\`return ${returned[1]}\` → \`return ${flipped}\``,
        text.replace(returned[0], `return ${flipped}`),
      );
    }
  });
  return dedupe(mutants);
}

/** `return 1` is both a constant and a return mutant: keep one of each result. */
function dedupe(mutants: LuaMutant[]): LuaMutant[] {
  const seen = new Set<string>();
  return mutants.filter((mutant) => {
    const key = `${mutant.line}\u0000${mutant.source}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
