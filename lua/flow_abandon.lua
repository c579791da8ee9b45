--[[
flow_abandon: an operator gives up on a flow (Ruby Wurk's `flow.abandon`,
lib/wurk/lua/flow_abandon.lua): no node is released again, and what the flow
holds goes: every node record, every node batch and its sets and markers,
the dead-node set, and the node batches' entries in the batch indexes
(`batches`, and `dead-batches` for a node whose job died).

The flow's own record stays, marked `abandoned`, on the clock it was created
with: a flow that vanished reads like one never created, and the record is
the guard that makes the release safe. flow_advance and flow_fail claim on a
node record this script deleted, so a job still queued for this flow runs,
settles into a batch that is gone (batch_settle fires nothing for it) and
advances nothing; nothing it does can rebuild the flow.

The claim is the flow's state: only a `running` or `failed` flow is
abandoned. A succeeded flow is not stuck, and abandoning an abandoned one
again would move the time of a decision already made.

KEYS[1]  flow:<fid>   KEYS[2]  batches   KEYS[3]  dead-batches
KEYS[4..] every key released: each node record, each node batch and its
         sets and markers, the dead-node set (read from the graph by the
         caller: node bids never change once created)
ARGV[1]  now, float epoch seconds as text
ARGV[2..] the node bids, for the batch indexes

Returns the flow's node count, or -1 when the flow is gone or was not
running or failed (nothing is written).
]]
local flow_key, batches, dead_batches = KEYS[1], KEYS[2], KEYS[3]
local state = redis.call("HGET", flow_key, "state")
if state ~= "running" and state ~= "failed" then
  return -1
end
-- Sliced so a 1,000-node flow (about ten keys a node) never unpacks more
-- values than the Lua stack holds.
local SLICE = 500
for from = 4, #KEYS, SLICE do
  redis.call("UNLINK", unpack(KEYS, from, math.min(from + SLICE - 1, #KEYS)))
end
for i = 2, #ARGV do
  redis.call("ZREM", batches, ARGV[i])
  redis.call("ZREM", dead_batches, ARGV[i])
end
-- `failed_at` stays where there is one: when the flow broke is still true,
-- and it is what an operator asks about an abandoned flow.
redis.call("HSET", flow_key, "state", "abandoned", "abandoned_at", ARGV[1])
return tonumber(redis.call("HGET", flow_key, "total"))
