-- Releases one waiting node of a flow: registers its job in the node's
-- batch (counted before it can run, as batch_add.lua does) and queues its
-- stored payload, stamped with enqueued_at by splicing the bytes, never by
-- decoding them (cjson would turn a 64-bit id into a double). A node a Ruby
-- flow stored with `at` goes to the schedule instead, as its push would.
local function flow_release(node_key, batch_key, jids_key, queue_key, queues_key, schedule_key, payload, expiry,
                            enqueued_at)
  local node = redis.call("HMGET", node_key, "jid", "queue", "at")
  redis.call("HSET", node_key, "state", "enqueued")
  if redis.call("SADD", jids_key, node[1]) == 1 then
    redis.call("HINCRBY", batch_key, "total", 1)
    redis.call("HINCRBY", batch_key, "pending", 1)
  end
  if redis.call("TTL", jids_key) == -1 then
    redis.call("EXPIRE", jids_key, expiry)
  end
  if node[3] and node[3] ~= "" then
    redis.call("ZADD", schedule_key, node[3], payload)
    return
  end
  local stamped = string.gsub(payload, "^{", '{"enqueued_at":' .. enqueued_at .. ",", 1)
  redis.call("SADD", queues_key, node[2])
  redis.call("LPUSH", queue_key, stamped)
end

-- The flow is settled when no node is left to settle: every node succeeded,
-- or died under a policy that lets its dependents go on.
local function flow_settle_one(flow_key, now)
  local pending = redis.call("HINCRBY", flow_key, "pending", -1)
  if pending == 0 then
    redis.call("HSET", flow_key, "state", "succeeded", "finished_at", now)
  end
  return pending
end
