-- Shutdown: acknowledges the given finished jobs, hands over the failures
-- this process could not file, then hands every other job still in its
-- private list back to the head of its queue (the right end, fetched next),
-- the oldest claim ending up first.
--
-- KEYS[1] = private list, KEYS[2] = public queue (queue:<name>), KEYS[3] =
-- queues, KEYS[4] = wurk:unsettled.
-- ARGV[1] = queue name, ARGV[2] = d (payloads to acknowledge), ARGV[3] = u
-- (unfiled failures), then d payloads, then u pairs (payload as fetched,
-- JSON record {set, score, payload} to file later).
--
-- Returns the number of jobs handed back.
--
-- An unfiled failure already ran: handing it back to its queue would run it
-- again, dropping it would lose it. Parked in wurk:unsettled, it is filed by
-- whichever live process next checks for orphans.
local drops = tonumber(ARGV[2])
local unsettled = tonumber(ARGV[3])
for i = 4, 3 + drops do
  redis.call("LREM", KEYS[1], -1, ARGV[i])
end
local base = 4 + drops
for i = 0, unsettled - 1 do
  local payload, record = ARGV[base + 2 * i], ARGV[base + 2 * i + 1]
  if redis.call("LREM", KEYS[1], -1, payload) == 1 then
    redis.call("RPUSH", KEYS[4], record)
  end
end
local moved = 0
while redis.call("LMOVE", KEYS[1], KEYS[2], "LEFT", "RIGHT") do
  moved = moved + 1
end
if moved > 0 then
  redis.call("SADD", KEYS[3], ARGV[1])
end
return moved
