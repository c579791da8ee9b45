-- Changes an until_executed running lock only while the given jid owns it:
-- a run that outlived its lock must never release or stretch the lock a
-- newer slot's job has taken since.
--
-- KEYS[1] = periodic:running:<pjid>
-- ARGV[1] = owner jid
-- ARGV[2] = new TTL in seconds, or "0" to release the lock
--
-- Returns 1 when the lock was this jid's and was changed, else 0.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return 0
end
if ARGV[2] == "0" then
  redis.call("DEL", KEYS[1])
else
  redis.call("EXPIRE", KEYS[1], ARGV[2])
end
return 1
