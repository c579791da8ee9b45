-- Hands jobs that never started back to the head of their queue (the right
-- end, fetched next), each only if it still sits in this process's private
-- list: one another process already recovered must not be queued twice.
--
-- KEYS[1] = private list, KEYS[2] = public queue (queue:<name>).
-- ARGV = payloads, in the order they were claimed (oldest first).
--
-- Returns the number handed back.
--
-- Pushed before it is removed: a script is not rolled back when a command
-- fails, so an RPUSH refused (a queue key of the wrong type) must find the
-- job still in the private list, not gone from both.
local moved = 0
for i = #ARGV, 1, -1 do
  if redis.call("LPOS", KEYS[1], ARGV[i]) then
    redis.call("RPUSH", KEYS[2], ARGV[i])
    redis.call("LREM", KEYS[1], -1, ARGV[i])
    moved = moved + 1
  end
end
return moved
