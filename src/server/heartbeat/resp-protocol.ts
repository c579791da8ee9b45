/**
 * RESP2 as the heartbeat's plain connection speaks it: commands out as
 * arrays of bulk strings, replies in as strings, integers, nulls, errors
 * and arrays of those. Bulk replies are decoded as UTF-8 (the heartbeat
 * reads signal names and counts, never job bytes).
 */

/** A reply Redis refused with (`-WRONGTYPE …`). Named as ioredis names its own, so one check reads both clients. */
export class RespReplyError extends Error {
  /** For EXECABORT: the replies that refused commands while the transaction was queued. */
  previousErrors?: RespReplyError[];

  override get name(): string {
    return 'ReplyError';
  }
}

export type RespReply = string | number | null | RespReplyError | RespReply[];

const CR = 13;
const PLUS = 43;
const MINUS = 45;
const COLON = 58;
const DOLLAR = 36;
const STAR = 42;

export function encodeCommand(command: ReadonlyArray<string | number>): string {
  let out = `*${command.length}\r\n`;
  for (const arg of command) {
    const text = String(arg);
    out += `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
  }
  return out;
}

/** Where an unfinished reply needs the buffer to reach before a read can finish it (see readReply). */
export interface Wanting {
  bytes: number;
}

/**
 * One whole reply at `at` and where the next begins, or undefined while its
 * bytes have not all arrived; `wanting.bytes` then says how long the buffer
 * must grow before another read can finish it (a bulk string's whole
 * length once its header is in), so a large reply arriving in many chunks
 * is read once, not again from its start after each chunk.
 */
export function readReply(
  buffer: Buffer,
  at: number,
  wanting: Wanting = { bytes: 0 },
): [RespReply, number] | undefined {
  wanting.bytes = buffer.length + 1;
  if (at >= buffer.length) return undefined;
  const lineEnd = buffer.indexOf(CR, at + 1);
  if (lineEnd < 0 || lineEnd + 1 >= buffer.length) return undefined;
  const line = buffer.toString('utf8', at + 1, lineEnd);
  const next = lineEnd + 2;
  switch (buffer[at]) {
    case PLUS:
      return [line, next];
    case MINUS:
      return [new RespReplyError(line), next];
    case COLON:
      return [Number(line), next];
    case DOLLAR: {
      const length = Number(line);
      if (length < 0) return [null, next];
      if (buffer.length < next + length + 2) {
        wanting.bytes = next + length + 2;
        return undefined;
      }
      return [buffer.toString('utf8', next, next + length), next + length + 2];
    }
    case STAR: {
      const count = Number(line);
      if (count < 0) return [null, next];
      const items: RespReply[] = [];
      let position = next;
      for (let index = 0; index < count; index++) {
        const item = readReply(buffer, position, wanting);
        if (!item) return undefined;
        items.push(item[0]);
        position = item[1];
      }
      return [items, position];
    }
    default:
      throw new Error(`unexpected byte ${buffer[at]} at the start of a Redis reply`);
  }
}
