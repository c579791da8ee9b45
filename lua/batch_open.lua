--[[
batch_open: writes a new batch, held open by its first `jobs` block, and a
child batch's link to its parent (docs/batches.md), in one step. The child
joins the parent's `-kids` (every child) and `-pkids` (children not yet
finished) in the same call that creates it, so the parent cannot finish
between the two: a parent that is held open (its `jobs` block, or the job
of the parent that opens the child, is still live) waits for the child, and
a parent that already succeeded refuses it rather than be outlived by it.

KEYS[1]  b-<bid>          KEYS[2]  b-<bid>-jids        KEYS[3]  batches
KEYS[4]  b-<parent>       KEYS[5]  b-<parent>-kids     KEYS[6]  b-<parent>-pkids
KEYS[7]  b-<parent>-success                      (KEYS[4..7] only with a parent)
ARGV[1]  the hold member of the opening block
ARGV[2]  expiry in seconds (30 days), also the window of the `batches`
         index's trim (lua/include/index_trim.lua)
ARGV[3]  created_at, float epoch seconds as text (also the `batches` score)
ARGV[4]  the bid
ARGV[5]  the parent's bid, "" for none
ARGV[6..] field, value, field, value… of the batch's hash

The new entry in `batches` trims the index as Ruby Wurk's first flush does
(Batch.trim_index): entries older than the window go, with the batches they
named, and it keeps at most INDEX_MAX - 1.

Returns 1 when written; -1 when the parent does not exist, -2 when the
parent already succeeded, -3 when a batch with this bid exists already.
]]
-- #include index_trim
if redis.call("EXISTS", KEYS[1]) == 1 then
  return -3
end
local parent = ARGV[5]
if parent ~= "" then
  if redis.call("EXISTS", KEYS[4]) == 0 then
    return -1
  end
  if redis.call("EXISTS", KEYS[7]) == 1 or redis.call("HEXISTS", KEYS[4], "success_at") == 1 then
    return -2
  end
end
local fields = {}
for i = 6, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
redis.call("HSET", KEYS[1], unpack(fields))
redis.call("SADD", KEYS[2], ARGV[1])
redis.call("ZADD", KEYS[3], ARGV[3], ARGV[4])
trim_index(KEYS[3], ARGV[3], ARGV[2])
redis.call("EXPIRE", KEYS[1], ARGV[2])
redis.call("EXPIRE", KEYS[2], ARGV[2])
if parent ~= "" then
  redis.call("HSET", KEYS[1], "parent_bid", parent)
  redis.call("SADD", KEYS[5], ARGV[4])
  redis.call("SADD", KEYS[6], ARGV[4])
  -- The parent's sets take the expiry of the first child (Ruby Wurk's), and
  -- keep it: TTL == -1 rather than EXPIRE NX, which Redis 6.2 lacks.
  for i = 5, 6 do
    if redis.call("TTL", KEYS[i]) == -1 then
      redis.call("EXPIRE", KEYS[i], ARGV[2])
    end
  end
end
return 1
