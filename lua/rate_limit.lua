-- Sliding-window rate limiter of the HTTP API (docs/internals/spec/contract.md §1.9), one call per
-- request. Time is Redis's own TIME, so a fleet of processes with drifting
-- clocks shares one window per credential.
--
-- KEYS[1]  limiter state: ZSET lmtr-w:<name>, members = one per admitted request,
--          scores = microseconds since the epoch
-- ARGV[1]  limit: requests admitted per window
-- ARGV[2]  window length in seconds
-- ARGV[3]  a string unique to this request (two requests in one microsecond
--          must not collapse into one member)
--
-- Returns { 1, 0 } when admitted, { 0, retry_after_seconds } when refused;
-- retry_after = ceil(oldest entry + window - now), never below 1.
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local window = tonumber(ARGV[2]) * 1000000
local limit = tonumber(ARGV[1])

redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, now .. '-' .. ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
  return { 1, 0 }
end

local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local retry_after = math.ceil((tonumber(oldest[2]) + window - now) / 1000000)
if retry_after < 1 then retry_after = 1 end
return { 0, retry_after }
