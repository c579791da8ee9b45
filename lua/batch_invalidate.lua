--[[
batch_invalidate: marks a batch and every batch under it (its `-kids`, their
`-kids`, …) invalidated (`invalidated` = 1 on each hash), as Ruby Wurk's
invalidate_all / Sidekiq Pro's invalidate_all do (docs/batches.md). Nothing
else changes: the jobs stay queued and their batches counted; a job of an
invalidated batch that has not started is skipped when it is taken, and
counts as a success (Ruby Wurk's server middleware), so the batch still
finishes and fires. A batch whose hash is gone is not written again.

KEYS[1]  b-<bid>
ARGV[1]  the bid

Returns how many batches were marked; 0 when the batch does not exist.
]]
if redis.call("EXISTS", KEYS[1]) == 0 then
  return 0
end
local queue, seen, head, marked = { ARGV[1] }, { [ARGV[1]] = true }, 1, 0
while head <= #queue do
  local base = "b-" .. queue[head]
  head = head + 1
  if redis.call("EXISTS", base) == 1 then
    redis.call("HSET", base, "invalidated", "1")
    marked = marked + 1
    for _, kid in ipairs(redis.call("SMEMBERS", base .. "-kids")) do
      if not seen[kid] then
        seen[kid] = true
        queue[#queue + 1] = kid
      end
    end
  end
end
return marked
