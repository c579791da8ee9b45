import { encodeCommand, readReply, RespReplyError } from '../../src/server/heartbeat/resp-protocol';

/** Every reply a part at a time, as TCP may deliver it: nothing is read until its last byte is there. */
describe('RESP2 replies', () => {
  const cases: Array<[string, string, unknown]> = [
    ['a status', '+OK\r\n', 'OK'],
    ['an error', '-WRONGTYPE Operation against a key\r\n', new RespReplyError('WRONGTYPE Operation against a key')],
    ['an integer', ':-42\r\n', -42],
    ['a bulk string with CRLF and UTF-8 inside', '$9\r\nzß\r\n水!\r\n', 'zß\r\n水!'],
    ['an empty bulk string', '$0\r\n\r\n', ''],
    ['a null bulk', '$-1\r\n', null],
    ['a null array', '*-1\r\n', null],
    ['an empty array', '*0\r\n', []],
    ['a nested array', '*3\r\n:1\r\n*2\r\n$3\r\ntwo\r\n$-1\r\n+three\r\n', [1, ['two', null], 'three']],
  ];

  it.each(cases)('%s: read whole, with where the next reply begins', (_, wire, expected) => {
    const bytes = Buffer.from(`${wire}+NEXT\r\n`);
    const [reply, next] = readReply(bytes, 0)!;
    expect(reply).toEqual(expected);
    if (expected instanceof RespReplyError) expect(reply).toBeInstanceOf(RespReplyError);
    expect(readReply(bytes, next)).toEqual(['NEXT', bytes.length]);
  });

  it.each(cases)(
    '%s: not read from any part of it, each part saying how far the buffer must grow, never past the reply',
    (_, wire) => {
      const bytes = Buffer.from(wire);
      for (let end = 0; end < bytes.length; end++) {
        const wanting = { bytes: 0 };
        expect(readReply(bytes.subarray(0, end), 0, wanting)).toBeUndefined();
        expect(wanting.bytes).toBeGreaterThan(end);
        expect(wanting.bytes).toBeLessThanOrEqual(bytes.length);
      }
    },
  );

  it("wants a bulk string's whole length once its header is in, also inside an array", () => {
    const wanting = { bytes: 0 };
    expect(readReply(Buffer.from('$100\r\nabc'), 0, wanting)).toBeUndefined();
    expect(wanting.bytes).toBe(6 + 100 + 2);
    expect(readReply(Buffer.from('*2\r\n:1\r\n$10\r\nab'), 0, wanting)).toBeUndefined();
    expect(wanting.bytes).toBe(13 + 10 + 2);
    expect(readReply(Buffer.from('+OK\r\n'), 5, wanting)).toBeUndefined();
    expect(wanting.bytes).toBe(6);
  });

  it('reads from an offset, and nothing past the end', () => {
    const bytes = Buffer.from(':1\r\n:2\r\n');
    expect(readReply(bytes, 4)).toEqual([2, 8]);
    expect(readReply(bytes, 8)).toBeUndefined();
  });

  it('a byte that starts no reply type is a protocol error', () => {
    expect(() => readReply(Buffer.from('!oops\r\n'), 0)).toThrow(/^unexpected byte 33 at the start of a Redis reply$/);
  });

  it('a refusal is named ReplyError, as ioredis names its own', () => {
    expect(new RespReplyError('ERR x').name).toBe('ReplyError');
  });

  it('encodes a command as an array of bulk strings, lengths in bytes', () => {
    expect(encodeCommand(['SET', 'k', 'ß', 5])).toBe('*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nß\r\n$1\r\n5\r\n');
  });
});
