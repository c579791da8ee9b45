-- Gives a unique job's lock back, only if this job still holds it.
--
-- KEYS[1] = unique:<digest>
-- ARGV[1] = the jid releasing
--
-- Returns 1 when the lock was deleted, 0 when it had expired or belongs to
-- another jid: a lock that expired during a long run and was taken by a
-- newer push must not be freed by the old job, or a third push would slip in
-- beside the newer one.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("DEL", KEYS[1])
  return 1
end
return 0
