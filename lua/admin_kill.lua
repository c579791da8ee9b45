-- Moves entries of `schedule` or `retry` into `dead` with their stored
-- bytes, scored now, then trims `dead` as Sidekiq's DeadSet#kill does.
-- Each entry moves only if it is still in the source: never in two places.
--
-- KEYS[1] = the source sorted set, KEYS[2] = dead.
-- ARGV[1] = score (now, float seconds), ARGV[2] = drop dead entries scored
-- below this, ARGV[3] = keep at most this many dead entries, ARGV[4] = "pop"
-- to take the ARGV[5] lowest-scored entries (ZPOPMIN: kill all, in batches),
-- or "members" to take the members listed from ARGV[5] on.
--
-- Returns the number of entries moved.
local moved = 0
if ARGV[4] == "pop" then
  local popped = redis.call("ZPOPMIN", KEYS[1], tonumber(ARGV[5]))
  for i = 1, #popped, 2 do
    redis.call("ZADD", KEYS[2], ARGV[1], popped[i])
    moved = moved + 1
  end
else
  for i = 5, #ARGV do
    if redis.call("ZREM", KEYS[1], ARGV[i]) == 1 then
      redis.call("ZADD", KEYS[2], ARGV[1], ARGV[i])
      moved = moved + 1
    end
  end
end
if moved > 0 then
  redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", "(" .. ARGV[2])
  redis.call("ZREMRANGEBYRANK", KEYS[2], 0, -tonumber(ARGV[3]) - 1)
end
return moved
