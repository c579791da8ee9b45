-- Deletes listed jobs from a sorted set (schedule, retry, dead) or a queue
-- list, and gives back the unique lock of each job it removed, in one step:
-- the identical push right after an admin delete is taken, never dropped
-- against a lock whose job is gone (Sidekiq Enterprise unlocks on delete).
-- A member no longer there (run, moved, deleted meanwhile) keeps its lock.
--
-- KEYS[1] = the sorted set or the queue list,
-- KEYS[1 + k] = the k-th unique lock named below.
-- ARGV[1] = "zset" or "list", then per job three values from ARGV[2] on:
-- the member exactly as stored, its jid, and the index k of its unique lock
-- (0 when it names none).
--
-- Returns the number of jobs removed.
-- #include release_held_lock
local removed = 0
for i = 2, #ARGV, 3 do
  local gone
  if ARGV[1] == "zset" then
    gone = redis.call("ZREM", KEYS[1], ARGV[i])
  else
    gone = redis.call("LREM", KEYS[1], 1, ARGV[i])
  end
  if gone > 0 then
    removed = removed + 1
    local lock = tonumber(ARGV[i + 2])
    if lock > 0 then
      release_held_lock(KEYS[1 + lock], ARGV[i + 1])
    end
  end
end
return removed
