-- Hands every job of a claimed list (claimed, never started) back to the
-- head of its queue (the right end, fetched next), the oldest claim ending
-- up first. Used at shutdown, and by the heartbeat thread when this
-- process's event loop has not answered for orphanThreshold (a perform
-- blocking it would otherwise strand its prefetched neighbours for as long
-- as it lives).
--
-- KEYS[1] = claimed list (queue:<name>|<host>|<pid>|<nonce>|1), KEYS[2] =
-- public queue, KEYS[3] = queues.
-- ARGV[1] = queue name.
--
-- Returns the number of jobs handed back.
--
-- Safe against the owner starting one at the same moment: a start is an
-- LMOVE out of this very list, so each job is either started (moved on) or
-- handed back (moved here), never both.
local moved = 0
while redis.call("LMOVE", KEYS[1], KEYS[2], "LEFT", "RIGHT") do
  moved = moved + 1
end
if moved > 0 then
  redis.call("SADD", KEYS[3], ARGV[1])
end
return moved
