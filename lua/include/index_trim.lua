-- trim_index(key, now, window): bounds an index of batches or flows (the
-- sorted sets `batches`, `dead-batches`, `flows`) as Ruby Wurk's
-- Batch.trim_index does on each write to one: the entries scored more than
-- `window` seconds (a batch's 30-day expiry) before `now` go, their batch
-- having expired with them, and of the rest all but the newest
-- INDEX_MAX - 1 (Ruby Wurk's INDEX_MAX and its ZREMRANGEBYRANK 0 -max).
-- Scores at or above 1e11 are Sidekiq Pro 8's epoch milliseconds: that band
-- is cut at the same time. Without this nothing but a delete or a listing
-- that meets an expired entry ever shrinks an index.
local INDEX_MAX = 1000000
local function trim_index(key, now, window)
  local cutoff = tonumber(now) - tonumber(window)
  redis.call("ZREMRANGEBYSCORE", key, "-inf", string.format("(%.6f", cutoff))
  redis.call("ZREMRANGEBYSCORE", key, "1e11", string.format("(%.0f", cutoff * 1000))
  redis.call("ZREMRANGEBYRANK", key, 0, -INDEX_MAX)
end
