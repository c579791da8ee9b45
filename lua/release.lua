-- Shutdown: acknowledges the given finished jobs, hands over the failures
-- this process could not file, then hands every other job still in its
-- private list back to the head of its queue (the right end, fetched next),
-- the oldest claim ending up first.
--
-- KEYS[1] = private list, KEYS[2] = public queue (queue:<name>), KEYS[3] =
-- queues, KEYS[4] = wurk:unsettled, KEYS[5] = retry, KEYS[6] = dead.
-- ARGV[1] = queue name, ARGV[2] = d (payloads to acknowledge), ARGV[3] = u
-- (unfiled failures), then d payloads, then u pairs (payload as fetched,
-- JSON record {set, score, payload} to file later).
--
-- Returns the number of jobs handed back.
--
-- An unfiled failure already ran: handing it back to its queue would run it
-- again, dropping it would lose it. Parked in wurk:unsettled, it is filed by
-- whichever live process next checks for orphans. A script is not rolled
-- back when a command fails, so a job leaves the private list only after the
-- write that holds it elsewhere succeeded: when wurk:unsettled cannot take
-- it (a key of the wrong type), it is filed in its own set, else in dead,
-- and when nothing can take it, it stays in the private list, out of the
-- hand-back, for orphan recovery.
-- #include park_record

local drops = tonumber(ARGV[2])
local unsettled = tonumber(ARGV[3])
for i = 4, 3 + drops do
  redis.call("LREM", KEYS[1], -1, ARGV[i])
end

-- Payloads that nothing could take, with their multiplicity: left where they are.
local kept = {}
local base = 4 + drops
for i = 0, unsettled - 1 do
  local payload, record = ARGV[base + 2 * i], ARGV[base + 2 * i + 1]
  if redis.call("LPOS", KEYS[1], payload) then
    if park_record(KEYS[4], KEYS[5], KEYS[6], record) then
      redis.call("LREM", KEYS[1], -1, payload)
    else
      kept[payload] = (kept[payload] or 0) + 1
    end
  end
end
-- Newest claim (the left end) first, each to the right end of the queue, so
-- the oldest ends up rightmost: fetched next. A kept payload is rotated past
-- instead, and is all that is left at the end.
local moved = 0
for _ = 1, redis.call("LLEN", KEYS[1]) do
  local job = redis.call("LINDEX", KEYS[1], 0)
  if kept[job] and kept[job] > 0 then
    kept[job] = kept[job] - 1
    redis.call("LMOVE", KEYS[1], KEYS[1], "LEFT", "RIGHT")
  else
    redis.call("LMOVE", KEYS[1], KEYS[2], "LEFT", "RIGHT")
    moved = moved + 1
  end
end
if moved > 0 then
  redis.call("SADD", KEYS[3], ARGV[1])
end
return moved
