-- Adds one drop to a leaky bucket limiter (Sidekiq Enterprise's leaky: a
-- bucket of `size` that drains at `size` per drain interval, so calls are
-- spread out instead of admitted in bursts at a boundary). The level drains
-- continuously on Redis's clock.
--
-- KEYS[1]  lmtr-l:<name>  HASH level (drops, decimal), last (epoch seconds, decimal)
-- ARGV[1]  size: drops the bucket holds
-- ARGV[2]  drain interval in seconds: a full bucket is empty again after it
--
-- Returns { admitted 1|0, milliseconds until one drop fits (0 when admitted), level after the call as text }.
-- The level is text because Redis truncates a Lua number reply to an integer.
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local size = tonumber(ARGV[1])
local rate = size / tonumber(ARGV[2])

local state = redis.call('HMGET', KEYS[1], 'level', 'last')
local level = tonumber(state[1] or '0')
local elapsed = now - tonumber(state[2] or now)
if elapsed < 0 then elapsed = 0 end
level = level - elapsed * rate
if level < 0 then level = 0 end

local admitted = 0
local wait_ms = 0
if level + 1 <= size then
  level = level + 1
  admitted = 1
else
  wait_ms = math.ceil((level + 1 - size) / rate * 1000)
end
redis.call('HSET', KEYS[1], 'level', tostring(level), 'last', tostring(now))
-- An empty bucket and a missing key mean the same: keep the key only while it
-- still holds drops, so an idle limiter leaves nothing behind.
redis.call('PEXPIRE', KEYS[1], math.ceil(level / rate * 1000) + 1000)
return { admitted, wait_ms, tostring(level) }
