-- Throttle push of a collapse policy (Ruby Wurk's `throttle:<digest>:<slot index>` layout): the first push of each
-- epoch-aligned slot wins, the others are dropped.
--
-- KEYS[1] = throttle:<digest> (the prefix; the slot index is appended here, from Redis's clock)
-- ARGV[1] = slot width, whole seconds
-- ARGV[2] = the pushing job's jid
--
-- Returns { admitted, holder, ends_at }: admitted = 1 when this jid owns the slot (it took it, or already held it:
-- the replay of a push whose reply was lost); holder = the owning jid; ends_at = "%.6f" epoch seconds the slot closes.
--
-- The index is floor(now / slot) on Redis's clock, so every producer means the same window, and slot k and k + 1 are
-- different keys: a late expiry can never admit twice in one slot. The TTL only reclaims the key.
local prefix = KEYS[1]
local slot, jid = tonumber(ARGV[1]), ARGV[2]

local time = redis.call("TIME")
local now = tonumber(time[1]) + tonumber(time[2]) / 1000000
local index = math.floor(now / slot)
local ends_at = (index + 1) * slot
-- "%d": an index must never reach a key name in exponent notation.
local key = prefix .. ":" .. string.format("%d", index)
local ends = string.format("%.6f", ends_at)

if redis.call("SET", key, jid, "NX", "EX", math.max(1, math.ceil(ends_at - now))) then
  return { 1, jid, ends }
end
-- SET NX just failed and keys do not expire inside a script, so the holder is there.
local holder = redis.call("GET", key)
if holder == jid then
  return { 1, jid, ends }
end
return { 0, holder, ends }
