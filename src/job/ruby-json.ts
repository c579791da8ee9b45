/**
 * JSON text as Ruby's `JSON.generate` writes the same value, from any valid
 * JSON text: no white space, members in their order, strings with UTF-8 left
 * unescaped, integers with every digit, floats as Ruby's `Float#to_s` prints
 * them (`1.0`, `1.0e+20`, `1.0e-05`).
 *
 * A unique lock is named by a digest of this text, so a Ruby producer and a
 * wurk producer must reach the same bytes for the same job. It works on the
 * text, never on a decoded JS value: JS cannot tell `1.0` from `1`, loses
 * digits beyond 2^53, and reorders integer-like object keys.
 */
export function rubyJson(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '"') {
      const end = stringEnd(text, i);
      // Ruby escapes exactly what JSON.stringify escapes for valid strings:
      // `"`, `\`, and control characters (\b \f \n \r \t, else \u00xx).
      out += JSON.stringify(JSON.parse(text.slice(i, end)));
      i = end;
    } else if (ch === '-' || (ch >= '0' && ch <= '9')) {
      const match = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400)) as RegExpExecArray;
      out += numberText(match[0]);
      i += match[0].length;
    } else if (ch === ' ' || ch === '\n' || ch === '\r' || ch === '\t') {
      i++;
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}

function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i + 1;
}

/**
 * An integer token stays as written (Ruby's Integer has every digit); anything with a fraction or exponent is a Float.
 */
function numberText(token: string): string {
  if (!/[.eE]/.test(token)) return token === '-0' ? '0' : token.replace(/^(-?)0+(?=\d)/, '$1');
  return rubyFloat(Number(token));
}

/**
 * Ruby's `Float#to_s` (flo_to_s in numeric.c): the shortest digits that read
 * back to the same double (what JS also finds), laid out fixed when the
 * point falls inside the digits, or at most 15 places right of the first
 * (padded with zeros), or at most 3 zeros left of it; else as `d.ddde±XX`.
 * Checked against real Ruby in test/interop/unique-digest.test.ts.
 */
export function rubyFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const sign = value < 0 ? '-' : '';
  const [mantissa, exponent] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  // decpt: where the decimal point falls relative to the first digit (1e0 → 1).
  const decpt = Number(exponent) + 1;
  if (decpt > 0 && decpt < digits.length) return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
  if (decpt > 0 && decpt <= 15) return `${sign}${digits}${'0'.repeat(decpt - digits.length)}.0`;
  if (decpt <= 0 && decpt > -4) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
  const fraction = digits.length > 1 ? digits.slice(1) : '0';
  const e = decpt - 1;
  return `${sign}${digits[0]}.${fraction}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
}
