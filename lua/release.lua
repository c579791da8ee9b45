-- Shutdown: acknowledges the given finished jobs, then hands every other job
-- still in this process's private list back to the head of its queue (the
-- right end, fetched next), oldest claim ending up first.
--
-- KEYS[1] = private list, KEYS[2] = public queue (queue:<name>), KEYS[3] = queues.
-- ARGV[1] = queue name, ARGV[2..] = payloads to acknowledge (drop).
--
-- Returns the number of jobs handed back.
for i = 2, #ARGV do
  redis.call("LREM", KEYS[1], -1, ARGV[i])
end
local moved = 0
while redis.call("LMOVE", KEYS[1], KEYS[2], "LEFT", "RIGHT") do
  moved = moved + 1
end
if moved > 0 then
  redis.call("SADD", KEYS[3], ARGV[1])
end
return moved
