-- Takes one slot of a fleet-wide concurrent limiter (Sidekiq Enterprise's
-- concurrent limiter shape). Time is Redis's own TIME, so processes with
-- drifting clocks agree on when a slot expired.
--
-- KEYS[1]  limiter state: ZSET lmtr-c:<name>, members = holder tokens,
--          scores = microseconds since the epoch when the slot lapses
-- ARGV[1]  size: slots the limiter has
-- ARGV[2]  lock timeout in milliseconds: a holder that crashed (or ran past
--          it) loses its slot then, so a killed process cannot shrink the
--          limiter for ever
-- ARGV[3]  the holder's token (released with ZREM by the caller)
--
-- Returns 1 when the slot was taken, 0 when every slot is held.
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
local lapse = now + tonumber(ARGV[2]) * 1000
redis.call('ZADD', KEYS[1], lapse, ARGV[3])
-- The key goes with its last slot: an idle limiter leaves nothing behind.
redis.call('PEXPIREAT', KEYS[1], math.ceil(redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2] / 1000))
return 1
