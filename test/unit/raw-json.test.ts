import { RawJson, stringifyWithRaw } from '../../src/api/raw-json';

/** Stored payloads placed in a response byte for byte, whatever surrounds them. */
describe('api: JSON with raw members', () => {
  it('writes each raw member as its own text, keeping a Ruby 1.0 and a big integer as stored', () => {
    const payload = '{"class":"A","args":[1.0,12345678901234567890]}';
    expect(stringifyWithRaw({ job: new RawJson(payload), list: [new RawJson('2.50'), new RawJson('[]')] })).toBe(
      `{"job":${payload},"list":[2.50,[]]}`,
    );
  });

  it('is JSON.stringify when there is no raw member, and a string that looks like a marker stays a string', () => {
    expect(stringifyWithRaw({ a: [1, 'x'], b: null })).toBe('{"a":[1,"x"],"b":null}');
    const lookalike = { text: '\u0000raw:0', raw: new RawJson('1.0') };
    expect(JSON.parse(stringifyWithRaw(lookalike))).toEqual({ text: '\u0000raw:0', raw: 1 });
    expect(stringifyWithRaw(lookalike)).toBe('{"text":"\\u0000raw:0","raw":1.0}');
  });

  it('numbers raw members in order past ten', () => {
    const values = Array.from({ length: 12 }, (_, i) => new RawJson(`${i}.0`));
    expect(stringifyWithRaw(values)).toBe(`[${values.map((value) => value.text).join(',')}]`);
  });

  it("a string that spells another response's marker stays a string: each response draws its own", () => {
    // The module object itself (an import namespace cannot be spied on).
    const crypto = require('node:crypto') as typeof import('node:crypto');
    const drawn: Buffer[] = [];
    const real = crypto.randomBytes;
    const spy = jest.spyOn(crypto, 'randomBytes').mockImplementation(((size: number) => {
      const bytes = real(size);
      drawn.push(bytes);
      return bytes;
    }) as typeof crypto.randomBytes);
    try {
      stringifyWithRaw([new RawJson('1.0')]);
      expect(drawn).toHaveLength(1);
      const earlier = `wurk-raw-${drawn[0].toString('hex')}-0`;
      expect(stringifyWithRaw({ text: earlier, raw: new RawJson('2.0') })).toBe(`{"text":"${earlier}","raw":2.0}`);
    } finally {
      spy.mockRestore();
    }
  });
});
