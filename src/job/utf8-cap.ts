/** What a capped text kept, and whether anything was cut. */
export interface CappedText {
  text: string;
  truncated: boolean;
}

/**
 * Keeps at most `maxBytes` bytes of `text`'s UTF-8 encoding, dropping a
 * character the cut would split, so the stored head is still valid UTF-8
 * (a reader decoding it must never meet half a code point).
 */
export function capUtf8(text: string, maxBytes: number): CappedText {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text: bytes.toString('utf8'), truncated: false };
  let end = maxBytes;
  // A continuation byte (10xxxxxx) at the cut means the cut falls inside a
  // character: back up to that character's lead byte and drop it whole. The
  // bytes are Buffer's own UTF-8, whose first byte is never a continuation
  // byte, so the walk stops at 0 at the latest.
  while ((bytes[end] & 0xc0) === 0x80) end--;
  return { text: bytes.subarray(0, end).toString('utf8'), truncated: true };
}
