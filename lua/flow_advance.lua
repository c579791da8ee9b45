--[[
flow_advance: one node of a flow succeeded (its batch fired `success`, and
the callback job Wurk::Flow::Completion#on_success runs this). Releases every
dependent this node was the last dependency of and settles the flow when no
node is left. One step because siblings race: two dependencies of one node
finishing at once must see the counter reach zero exactly once, or the node
runs twice or never. Ruby Wurk's rules (lib/wurk/lua/flow_advance.lua).

The claim is the node's own state: only an `enqueued` node (or a `dead` one
retried from the dead set to success) advances, so a callback job that runs
twice (callbacks are at-least-once) writes once.

KEYS[1]  flow:<fid>       KEYS[2]  queues          KEYS[3]  schedule
KEYS[4]  flow:<fid>:dead  KEYS[5]  flow:<fid>:<index> (the node that succeeded)
KEYS[6]  status:<its jid> (its stored result, for a dependent that pipes it)
KEYS[7..] four per dependent, in ARGV[5..] order: flow:<fid>:<dep>, b-<bid>,
         b-<bid>-jids, queue:<its queue>
ARGV[1]  the node's index
ARGV[2]  now, float epoch seconds as text
ARGV[3]  enqueued_at for the jobs this releases, in the writer's timestamp dialect
ARGV[4]  expiry in seconds for keys the flow wrote without one
ARGV[5..] the node's dependents' indexes

Returns {pending, released, broken}: the flow's nodes left to settle, one
class/queue pair per node released, one index/reason pair per node that
could not be built (a chain link whose upstream left no result);
{-1, {}, {}} when the flow is gone or the claim was refused.
]]
-- #include flow_release
local flow_key, dead_key, node_key, status_key = KEYS[1], KEYS[4], KEYS[5], KEYS[6]
local index, now, enqueued_at = ARGV[1], ARGV[2], ARGV[3]
-- HINCRBY and HSET create what they touch: a straggler of an expired flow
-- must not resurrect it without a clock.
if redis.call("EXISTS", flow_key) == 0 then
  return { -1, {}, {} }
end
local expiry = redis.call("HGET", flow_key, "expiry") or ARGV[4]
local state = redis.call("HGET", node_key, "state")
if state ~= "enqueued" and state ~= "dead" then
  return { -1, {}, {} }
end
redis.call("HSET", node_key, "state", "succeeded")
if state == "dead" then
  redis.call("SREM", dead_key, index)
  if redis.call("SCARD", dead_key) == 0 and redis.call("HGET", flow_key, "state") == "failed" then
    redis.call("HSET", flow_key, "state", "running")
    redis.call("HDEL", flow_key, "failed_at")
  end
end

-- A chain link (`pipe`, written by Ruby or by wurk) takes this node's stored
-- result as its last argument, spliced over the sentinel's bytes; a result
-- that is missing, truncated or withheld is no argument, and the link breaks
-- instead.
local function upstream()
  local row = redis.call("HMGET", status_key, "state", "result", "result_truncated", "result_withheld")
  if row[1] ~= "complete" then
    return nil, "piped result is missing: the upstream node left no completed status row"
  elseif row[3] == "1" then
    return nil, "piped result was truncated at the stored-result cap"
  elseif row[4] == "1" then
    return nil, "piped result was withheld: the upstream node declares encrypt: true"
  end
  return row[2] or "null", nil
end

local function splice(payload, sentinel, value)
  local from, to = string.find(payload, '"' .. sentinel .. '"', 1, true)
  if not from then
    return payload
  end
  return string.sub(payload, 1, from - 1) .. value .. string.sub(payload, to + 1)
end

local released, broken = {}, {}
for i = 5, #ARGV do
  local k = 7 + (i - 5) * 4
  local dep_key = KEYS[k]
  -- Only a waiting dependent is released: one a `continue` policy released
  -- early has run already, however its counter reads now.
  if redis.call("HINCRBY", dep_key, "remaining", -1) == 0 and redis.call("HGET", dep_key, "state") == "waiting" then
    local dep = redis.call("HMGET", dep_key, "class", "queue", "payload", "pipe")
    local payload, refusal = dep[3], nil
    if dep[4] and dep[4] ~= "" then
      local value
      value, refusal = upstream()
      if value then
        payload = splice(payload, dep[4], value)
      end
    end
    if refusal then
      redis.call("HSET", dep_key, "state", "broken", "error", refusal)
      redis.call("SADD", dead_key, ARGV[i])
      redis.call("EXPIRE", dead_key, expiry)
      if redis.call("HGET", flow_key, "state") == "running" then
        redis.call("HSET", flow_key, "state", "failed", "failed_at", now)
      end
      broken[#broken + 1] = ARGV[i]
      broken[#broken + 1] = refusal
    else
      flow_release(dep_key, KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[2], KEYS[3], payload, expiry, enqueued_at)
      released[#released + 1] = dep[1]
      released[#released + 1] = dep[2]
    end
  end
end
return { flow_settle_one(flow_key, now), released, broken }
