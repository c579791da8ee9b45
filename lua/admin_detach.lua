-- The first step of clearing a set or a queue (the admin's "Delete all"):
-- renames it, in one step, to a private holding key that nothing else
-- writes, so every job in it is off the set at once and a job pushed later
-- lands in a fresh set, not in the clear. The caller then gives back the
-- unique locks of the held jobs (it alone can name them: the digest is
-- SHA-256 of Ruby JSON) and unlinks the holding key, which expires by
-- itself if the caller dies first.
--
-- KEYS[1] = the sorted set or queue list, KEYS[2] = the holding key,
-- KEYS[3] = queues (the SET of queue names).
-- ARGV[1] = "zset" or "list", ARGV[2] = the queue name to drop from
-- `queues` ("" for a sorted set), ARGV[3] = the holding key's TTL (seconds).
--
-- Returns how many jobs it detached (0 when the set did not exist).
local size
if ARGV[1] == "zset" then
  size = redis.call("ZCARD", KEYS[1])
else
  size = redis.call("LLEN", KEYS[1])
end
if ARGV[2] ~= "" then
  redis.call("SREM", KEYS[3], ARGV[2])
end
if size > 0 then
  redis.call("RENAME", KEYS[1], KEYS[2])
  redis.call("EXPIRE", KEYS[2], ARGV[3])
end
return size
