-- Moves entries of a sorted set (schedule, retry or dead) onto their queues
-- in one step, each only if it is still in the set: an entry the poller or
-- another admin took meanwhile is neither pushed twice nor lost.
--
-- KEYS[1] = the sorted set, KEYS[2] = queues (the SET of queue names),
-- KEYS[2 + i] = queue:<name> of the i-th move.
-- ARGV[1] = n (moves), then per move i: the member exactly as stored, the
-- payload to push (the same bytes, with `enqueued_at` and for a retry
-- `retry_count` spliced), the queue name.
--
-- Returns per move 1 when moved, 0 when the member was no longer in the set.
local n = tonumber(ARGV[1])
local out = {}
for i = 1, n do
  local base = 1 + (i - 1) * 3
  if redis.call("ZREM", KEYS[1], ARGV[base + 1]) == 1 then
    redis.call("SADD", KEYS[2], ARGV[base + 3])
    redis.call("LPUSH", KEYS[2 + i], ARGV[base + 2])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
