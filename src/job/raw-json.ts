/**
 * Span scanning over JSON text that JSON.parse has already accepted.
 *
 * These functions find where each top-level member or element starts and
 * ends, so a payload can be re-written by splicing text instead of by a
 * parse/stringify round trip, which would turn Ruby's `1.0` into `1` and
 * round integers beyond 2^53.
 */

function skipWhitespace(text: string, pos: number): number {
  while (pos < text.length) {
    const c = text.charCodeAt(pos);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    pos++;
  }
  return pos;
}

/** Index just past the string literal that opens at `pos`. */
function stringEnd(text: string, pos: number): number {
  for (let i = pos + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i + 1;
  }
  throw new SyntaxError('unterminated string');
}

/** Index just past the value that starts at `pos`. */
function valueEnd(text: string, pos: number): number {
  const first = text[pos];
  if (first === '"') return stringEnd(text, pos);
  if (first === '{' || first === '[') {
    let depth = 0;
    for (let i = pos; i < text.length; i++) {
      const c = text[i];
      if (c === '"') i = stringEnd(text, i) - 1;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    throw new SyntaxError('unbalanced brackets');
  }
  let i = pos;
  while (i < text.length && !',}] \n\r\t'.includes(text[i])) i++;
  return i;
}

/** The members of a JSON object text as [key, raw value text] pairs, in order. */
export function objectMembers(text: string): Array<[string, string]> {
  const members: Array<[string, string]> = [];
  let pos = skipWhitespace(text, 0);
  if (text[pos] !== '{') throw new SyntaxError('not an object');
  pos = skipWhitespace(text, pos + 1);
  if (text[pos] === '}') return members;
  for (;;) {
    const keyEnd = stringEnd(text, pos);
    const key = JSON.parse(text.slice(pos, keyEnd)) as string;
    pos = skipWhitespace(text, skipWhitespace(text, keyEnd) + 1);
    const end = valueEnd(text, pos);
    members.push([key, text.slice(pos, end)]);
    pos = skipWhitespace(text, end);
    if (text[pos] === '}') return members;
    pos = skipWhitespace(text, pos + 1);
  }
}

/** The elements of a JSON array text as raw texts, in order. */
export function arrayElements(text: string): string[] {
  const elements: string[] = [];
  let pos = skipWhitespace(text, 0);
  if (text[pos] !== '[') throw new SyntaxError('not an array');
  pos = skipWhitespace(text, pos + 1);
  if (text[pos] === ']') return elements;
  for (;;) {
    const end = valueEnd(text, pos);
    elements.push(text.slice(pos, end));
    pos = skipWhitespace(text, end);
    if (text[pos] === ']') return elements;
    pos = skipWhitespace(text, pos + 1);
  }
}

/** The deepest nesting of objects and arrays in a JSON text (a scalar is 0). */
export function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') i = stringEnd(text, i) - 1;
    else if (c === '{' || c === '[') max = Math.max(max, ++depth);
    else if (c === '}' || c === ']') depth--;
  }
  return max;
}
