-- Takes one admission from a bucket limiter (Sidekiq Enterprise's bucket: at
-- most `limit` per second/minute/hour/day, the count resetting at the top of
-- each interval on Redis's clock, so every process agrees on the boundary).
--
-- The interval's counter is named after the interval (lmtr-b:<name>:<epoch>),
-- and a script may only touch declared keys (Redis Cluster, Dragonfly): the
-- caller, which cannot read Redis's clock, declares the three keys around its
-- own epoch and the script picks the one TIME says is current.
--
-- KEYS[1]  lmtr-b:<name>:<base - 1>   STRING counter
-- KEYS[2]  lmtr-b:<name>:<base>
-- KEYS[3]  lmtr-b:<name>:<base + 1>
-- ARGV[1]  limit: admissions per interval
-- ARGV[2]  interval length in seconds
-- ARGV[3]  base: the caller's epoch, floor(caller's now / interval)
--
-- Returns { admitted 1|0, count in this interval after the call, milliseconds until the next boundary }.
-- A clock more than one interval off the caller's falls back to KEYS[2] (still declared, never an error).
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local limit = tonumber(ARGV[1])
local interval = tonumber(ARGV[2]) * 1000000
local epoch = math.floor(now / interval)
local key = KEYS[epoch - tonumber(ARGV[3]) + 2] or KEYS[2]
local until_next = math.ceil(((epoch + 1) * interval - now) / 1000)

local count = tonumber(redis.call('GET', key) or '0')
if count >= limit then
  return { 0, count, until_next }
end
count = redis.call('INCR', key)
-- The counter is dead once its interval ends; one interval of slack covers a
-- reader that looks at the previous interval's count.
redis.call('PEXPIRE', key, until_next + tonumber(ARGV[2]) * 1000)
return { 1, count, until_next }
