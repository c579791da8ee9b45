-- The benchmark's floor (bench/workers/floor-worker.ts), not a product
-- script: what keeping a job safe while it runs costs with nothing added.
-- One call acknowledges the previous batch and claims the next one.
--
-- KEYS[1]   queue:<name> (public)
-- KEYS[2]   the worker's private list (jobs claimed, until acknowledged)
-- ARGV[1]   most jobs to claim
-- ARGV[2..] payloads of the previous batch, to acknowledge
--
-- Returns the claimed payloads, oldest first (each LMOVEd from the right end
-- of the queue to the left end of the private list).

for i = 2, #ARGV do
  redis.call("LREM", KEYS[2], -1, ARGV[i])
end
local claimed = {}
for _ = 1, tonumber(ARGV[1]) do
  local job = redis.call("LMOVE", KEYS[1], KEYS[2], "RIGHT", "LEFT")
  if not job then break end
  claimed[#claimed + 1] = job
end
return claimed
