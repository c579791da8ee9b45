/**
 * A stored job payload placed in a response as its bytes: parsing and
 * re-encoding it would turn a Ruby `1.0` into `1` and lose big integers.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

/**
 * JSON.stringify, with each RawJson written as its own text. The text must
 * be valid JSON (a stored payload that parsed); the caller checks.
 */
export function stringifyWithRaw(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, member: unknown) => {
    if (!(member instanceof RawJson)) return member;
    raws.push(member.text);
    return `\u0000raw:${raws.length - 1}`;
  });
  if (raws.length === 0) return text;
  // JSON.stringify escapes U+0000, so no other string in the output can look like a marker.
  return text.replace(/"\\u0000raw:(\d+)"/g, (_marker, index: string) => raws[Number(index)]);
}
