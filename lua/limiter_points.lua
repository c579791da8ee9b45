-- Spends points from a points limiter (Sidekiq Enterprise's points: a budget
-- of `size` points that refills at `size` per interval, each call spending
-- what it says it costs). The budget refills continuously on Redis's clock.
--
-- KEYS[1]  lmtr-p:<name>  HASH points (left, decimal), last (epoch seconds, decimal)
-- ARGV[1]  size: the budget's points when full
-- ARGV[2]  refill interval in seconds: an empty budget is full again after it
-- ARGV[3]  points this call spends (0 < points <= size, checked by the caller)
--
-- Returns { admitted 1|0, milliseconds until the points are there (0 when admitted), points left as text }.
-- Points are text because Redis truncates a Lua number reply to an integer.
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local size = tonumber(ARGV[1])
local rate = size / tonumber(ARGV[2])
local cost = tonumber(ARGV[3])

local state = redis.call('HMGET', KEYS[1], 'points', 'last')
local points = tonumber(state[1] or size)
local elapsed = now - tonumber(state[2] or now)
if elapsed < 0 then elapsed = 0 end
points = points + elapsed * rate
if points > size then points = size end

local admitted = 0
local wait_ms = 0
if points >= cost then
  points = points - cost
  admitted = 1
else
  wait_ms = math.ceil((cost - points) / rate * 1000)
end
redis.call('HSET', KEYS[1], 'points', tostring(points), 'last', tostring(now))
-- A full budget and a missing key mean the same: keep the key only until it
-- has refilled, so an idle limiter leaves nothing behind.
redis.call('PEXPIRE', KEYS[1], math.ceil((size - points) / rate * 1000) + 1000)
return { admitted, wait_ms, tostring(points) }
