-- Drops from a batch index (`batches`, or a tag's `tags:<tag>`) the bids
-- whose batch hash is gone (expired, or deleted by a process that left its
-- index entry), so a listing skips them once and the index does not grow
-- for ever: nothing else trims it (batches expire by TTL, their index
-- entries do not).
--
-- KEYS[1]     the index: a ZSET (`batches`), or a tag's SET (Ruby Wurk's),
--             HASH or ZSET keyed by bid
-- KEYS[2..n]  b-<bid> of each candidate, in the order of ARGV
-- ARGV[1..]   the candidates' bids
--
-- Returns the number of bids dropped. A hash written since the caller read
-- it keeps its entry: the check and the removal are one step.
local kind = redis.call("TYPE", KEYS[1]).ok
local dropped = 0
for i, bid in ipairs(ARGV) do
  if redis.call("EXISTS", KEYS[i + 1]) == 0 then
    if kind == "zset" then
      dropped = dropped + redis.call("ZREM", KEYS[1], bid)
    elseif kind == "set" then
      dropped = dropped + redis.call("SREM", KEYS[1], bid)
    elseif kind == "hash" then
      dropped = dropped + redis.call("HDEL", KEYS[1], bid)
    end
  end
end
return dropped
