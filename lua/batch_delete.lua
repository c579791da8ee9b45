--[[
batch_delete: an operator's delete of one batch, in one step (Sidekiq Pro's
`Sidekiq::Batch::Status#delete`, Ruby Wurk's `Status#delete`): every key of
the batch, its entries in `batches` and `dead-batches`, and its entry in the
reverse index of each of its tags. Keys go with UNLINK (as Pro since #4155),
so a batch of 100,000 jids does not hold Redis while its sets are freed.

The batch's jobs are not touched, as Pro and Ruby Wurk leave them: a job
still queued, scheduled, retrying or dead keeps its `bid` and runs as any
job; its outcome then finds no batch (batch_settle.lua answers "missing",
Ruby Wurk's ack scripts check the hash too), so it counts nothing and fires
nothing. A parent's `-kids` / `-pkids` are not touched here: BatchSet.delete
takes the child out of them and weighs the parent again (BatchStore.childGone).

KEYS[1]  b-<bid>        KEYS[2]  batches     KEYS[3]  dead-batches
KEYS[4..] the batch's other keys (Keys.batchKeys), b-<bid>-tags first
ARGV[1]  the bid
ARGV[2]  the prefix of a tag's index, "tags:" (Keys.batchTag)

A batch's tags are read from its hash's `tags` (a JSON array of strings, as
Ruby Wurk and Sidekiq Pro 8.1 write it) and from `b-<bid>-tags` (a SET, in
Pro's key list). A tag's index is cleaned whatever its type: SET (Ruby
Wurk's), HASH or ZSET keyed by bid; anything else is left alone.

Returns 1 when the batch existed (its hash), 0 when it did not; the
leftovers of an expired batch (index entries, markers) are removed either way.
]]
local bid = ARGV[1]
local existed = redis.call("EXISTS", KEYS[1])

local tags = {}
local text = redis.call("HGET", KEYS[1], "tags")
if text then
  local ok, decoded = pcall(cjson.decode, text)
  if ok and type(decoded) == "table" then
    for _, tag in ipairs(decoded) do
      if type(tag) == "string" then
        tags[#tags + 1] = tag
      end
    end
  end
end
if redis.call("TYPE", KEYS[4]).ok == "set" then
  for _, tag in ipairs(redis.call("SMEMBERS", KEYS[4])) do
    tags[#tags + 1] = tag
  end
end

for _, tag in ipairs(tags) do
  local index = ARGV[2] .. tag
  local kind = redis.call("TYPE", index).ok
  if kind == "set" then
    redis.call("SREM", index, bid)
  elseif kind == "hash" then
    redis.call("HDEL", index, bid)
  elseif kind == "zset" then
    redis.call("ZREM", index, bid)
  end
end

redis.call("ZREM", KEYS[2], bid)
redis.call("ZREM", KEYS[3], bid)
redis.call("UNLINK", KEYS[1], unpack(KEYS, 4))
return existed
