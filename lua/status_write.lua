--[[
status_write: write fields onto one job's status row and re-stamp its TTL,
in one round trip (docs/internals/spec/contract.md §2.6).

KEYS[1]  the row, status:<jid>
ARGV[1]  TTL in seconds, re-stamped on every write so an abandoned row
         expires on its own
ARGV[2]  create gate: "1" writes whether or not the row exists (lifecycle
         writes); anything else writes only onto a live row
ARGV[3..] field, value, field, value, ...

Returns 1 when the row was written, 0 when the gate refused.

The gate exists for progress: a progress write that arrives after the row
expired or was deleted (retention 0, an operator's DELETE) must not conjure
a row holding only progress fields, a stateless phantom no reader can
interpret. Checking and writing in one script closes the race between the
EXISTS and the HSET that two commands would leave open.
]]
if ARGV[2] ~= '1' and redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
if #ARGV < 4 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
