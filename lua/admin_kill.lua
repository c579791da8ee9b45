-- Moves listed entries of `schedule` or `retry` into `dead` with their
-- stored bytes, scored now, then trims `dead` as Sidekiq's DeadSet#kill does.
-- Each entry moves only if it is still in the source: never in two places.
-- A moved entry gives back its unique lock (a dead job never runs by
-- itself, as an automatic death releases it): the identical push after a
-- manual kill is taken, not dropped.
--
-- KEYS[1] = the source sorted set, KEYS[2] = dead,
-- KEYS[2 + k] = the k-th unique lock named below.
-- ARGV[1] = score (now, float seconds), ARGV[2] = drop dead entries scored
-- below this, ARGV[3] = keep at most this many dead entries, then per entry
-- three values from ARGV[4] on: the member exactly as stored, its jid, and
-- the index k of its unique lock (0 when it names none).
--
-- Returns the number of entries moved.
-- #include release_held_lock
local moved = 0
for i = 4, #ARGV, 3 do
  if redis.call("ZREM", KEYS[1], ARGV[i]) == 1 then
    redis.call("ZADD", KEYS[2], ARGV[1], ARGV[i])
    moved = moved + 1
    local lock = tonumber(ARGV[i + 2])
    if lock > 0 then
      release_held_lock(KEYS[2 + lock], ARGV[i + 1])
    end
  end
end
if moved > 0 then
  redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", "(" .. ARGV[2])
  redis.call("ZREMRANGEBYRANK", KEYS[2], 0, -tonumber(ARGV[3]) - 1)
end
return moved
