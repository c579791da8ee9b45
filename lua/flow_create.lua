--[[
flow_create: writes a whole flow (docs/flows.md) in one step: the flow
hash, one hash and one batch per node, and the queue entries of the nodes
that wait on nothing. One step because a half-written flow is invisible to
whatever waits on it: records without queued roots never advance, queued
roots without records advance a flow that does not exist.

The layout is Ruby Wurk's (lib/wurk/lua/flow_create.lua), so either side
reads and advances a flow the other wrote. Each node's batch is written here,
with its callbacks, because the callback must exist before the node's job can
run; a waiting node's batch starts empty and is filled when it is released.

KEYS[1]  flow:<fid>      KEYS[2]  flows     KEYS[3]  batches   KEYS[4]  queues
KEYS[5..] four per node, in ARGV[8..] order: flow:<fid>:<index>, b-<bid>,
         b-<bid>-jids, queue:<its queue>
ARGV[1]  fid
ARGV[2]  now, float epoch seconds as text (created_at of the flow and batches)
ARGV[3]  expiry in seconds of every key written
ARGV[4]  depth (the longest dependency path, in nodes)
ARGV[5]  width (the most edges on either side of one node)
ARGV[6]  the queue of every node batch's callbacks
ARGV[7]  the window in seconds of the `flows` and `batches` indexes' trim
         (a batch's 30-day expiry, whatever the flow's own)
ARGV[8..] one JSON object per node, every value a string: i, name, class,
         queue, jid, bid, state ("enqueued" for a root, else "waiting"),
         payload (the job's exact bytes, copied, never decoded), desc, cb
         (the batch's callbacks JSON), deps, dependents (JSON index arrays),
         remaining, on_failure when it is not the default "fail", and pipe
         (a chain link's sentinel, the quoted string in payload that its
         upstream's result replaces on release) when it is one

The new entries trim `flows` and `batches` once for the whole graph, as
Ruby Wurk's creation does and as batch_open.lua trims `batches`
(lua/include/index_trim.lua): entries older than the window go, and each
index keeps at most INDEX_MAX - 1.

Returns the number of jobs queued, or -1 when the fid exists already (a
replay after a lost reply): nothing is written twice.
]]
-- #include index_trim
if redis.call("EXISTS", KEYS[1]) == 1 then
  return -1
end
local now, expiry, callback_queue = ARGV[2], ARGV[3], ARGV[6]
local first_node = 8
local total = string.format("%d", #ARGV - first_node + 1)
redis.call("HSET", KEYS[1], "created_at", now, "state", "running", "total", total, "pending", total,
  "depth", ARGV[4], "width", ARGV[5], "expiry", expiry)
redis.call("EXPIRE", KEYS[1], expiry)

local queued = 0
for i = first_node, #ARGV do
  local node = cjson.decode(ARGV[i])
  local k = 5 + (i - first_node) * 4
  local node_key, batch_key, jids_key, queue_key = KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
  local is_root = node.state == "enqueued"
  local live = is_root and "1" or "0"
  redis.call("HSET", node_key, "index", node.i, "name", node.name, "class", node.class, "queue", node.queue,
    "jid", node.jid, "bid", node.bid, "state", node.state, "deps", node.deps, "dependents", node.dependents,
    "remaining", node.remaining, "payload", node.payload)
  if node.on_failure then
    redis.call("HSET", node_key, "on_failure", node.on_failure)
  end
  if node.pipe then
    redis.call("HSET", node_key, "pipe", node.pipe)
  end
  redis.call("EXPIRE", node_key, expiry)
  redis.call("HSET", batch_key, "created_at", now, "description", node.desc, "callback_queue", callback_queue,
    "callback_class", "", "parent_bid", "", "tags", "[]", "linger", "", "callbacks", node.cb,
    "total", live, "pending", live, "failures", "0")
  redis.call("EXPIRE", batch_key, expiry)
  redis.call("ZADD", KEYS[3], now, node.bid)
  if is_root then
    redis.call("SADD", jids_key, node.jid)
    redis.call("EXPIRE", jids_key, expiry)
    redis.call("SADD", KEYS[4], node.queue)
    redis.call("LPUSH", queue_key, node.payload)
    queued = queued + 1
  end
end
redis.call("ZADD", KEYS[2], now, ARGV[1])
trim_index(KEYS[2], now, ARGV[7])
trim_index(KEYS[3], now, ARGV[7])
return queued
