/**
 * Payload size (characters) from which reliable fetch keeps payloads out of
 * Lua: Redis hashes every string that enters a script, byte by byte (about
 * a microsecond of Redis CPU per kilobyte: 149 µs for an `EVAL` carrying
 * 100 KB, against 38 µs for an `LREM` of it). From here an acknowledgment
 * goes by plain `LREM`; once claimed payloads average this much, nothing is
 * prefetched (a start would pass each through Lua again) and claims for
 * free slots are plain `LMOVE`s (see reliable/large-claim.ts).
 */
export const LARGE_PAYLOAD = 16 * 1024;
