import { randomBytes } from 'node:crypto';

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
  // Stryker disable next-line ArrayDeclaration: a marker's number is the index its push gave it, whatever came before.
  const raws: string[] = [];
  // A marker no string of the value can spell: the members around a payload (an error message, a
  // queue name) are anyone's text, and a fixed marker in one of them would be swapped for a payload.
  // Hex and dashes only, so it needs no escaping in the JSON text nor in the pattern.
  const marker = `wurk-raw-${randomBytes(8).toString('hex')}-`;
  const text = JSON.stringify(value, (_key, member: unknown) => {
    if (!(member instanceof RawJson)) return member;
    raws.push(member.text);
    return `${marker}${raws.length - 1}`;
  });
  // With no raw member the pattern matches nothing and the text comes back as it was.
  return text.replace(new RegExp(`"${marker}(\\d+)"`, 'g'), (_marker, index: string) => raws[Number(index)]);
}
