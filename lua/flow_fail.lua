--[[
flow_fail: one node's job died (its batch fired `death`; the callback job
runs this), and the node's failure policy decides what its dependents do
(docs/flows.md):

  fail      (the default, Ruby Wurk's only rule) the node is marked dead and
            joins the flow's dead set; its dependents stay waiting and the
            flow reads `failed`. Retrying the dead job to success takes the
            node out through flow_advance.lua and the flow resumes.
  ignore    the death counts as the dependency being met: each dependent's
            remaining count goes down and a dependent at zero is released.
  continue  every dependent still waiting is released now, without waiting
            for its other dependencies (BullMQ's continueParentOnFailure).

Under ignore and continue the node reads `ignored` and is settled for the
flow; a later success of its job (a retry by hand) changes nothing, since
flow_advance.lua claims only from `enqueued` and `dead`.

KEYS[1]  flow:<fid>       KEYS[2]  flow:<fid>:<index> (the node that died)
KEYS[3]  flow:<fid>:dead  KEYS[4]  queues           KEYS[5]  schedule
KEYS[6]  b-<bid>-failed  KEYS[7]  b-<bid>-died  KEYS[8]  b-<bid>-failinfo
         (the dying node's batch sets, which batch_settle.lua writes without
         a clock: they are stamped with the flow's expiry here)
KEYS[9..] four per dependent, in ARGV[5..] order: flow:<fid>:<dep>, b-<bid>,
         b-<bid>-jids, queue:<its queue>
ARGV[1]  the node's index
ARGV[2]  now, float epoch seconds as text
ARGV[3]  enqueued_at for the jobs this releases, in the writer's timestamp dialect
ARGV[4]  expiry in seconds for keys the flow wrote without one
ARGV[5..] the node's dependents' indexes

Returns {claimed, released}: claimed is 1 when this call recorded the death
(0 when the flow is gone or the node was not `enqueued`: a redelivered
callback), released one class/queue pair per dependent it queued.
]]
-- #include flow_release
local flow_key, node_key, dead_key = KEYS[1], KEYS[2], KEYS[3]
local index, now, enqueued_at = ARGV[1], ARGV[2], ARGV[3]
if redis.call("EXISTS", flow_key) == 0 then
  return { 0, {} }
end
local expiry = redis.call("HGET", flow_key, "expiry") or ARGV[4]
-- Before the claim: a redelivered callback stamps what a first run may have
-- missed, and a stamp already there is kept (the flow's clock, not a new one).
for k = 6, 8 do
  if redis.call("TTL", KEYS[k]) == -1 then
    redis.call("EXPIRE", KEYS[k], expiry)
  end
end
if redis.call("HGET", node_key, "state") ~= "enqueued" then
  return { 0, {} }
end
local policy = redis.call("HGET", node_key, "on_failure")
if policy ~= "ignore" and policy ~= "continue" then
  redis.call("HSET", node_key, "state", "dead")
  redis.call("SADD", dead_key, index)
  if redis.call("TTL", dead_key) == -1 then
    redis.call("EXPIRE", dead_key, expiry)
  end
  if redis.call("HGET", flow_key, "state") == "running" then
    redis.call("HSET", flow_key, "state", "failed", "failed_at", now)
  end
  return { 1, {} }
end

redis.call("HSET", node_key, "state", "ignored")
local released = {}
for i = 5, #ARGV do
  local k = 9 + (i - 5) * 4
  local dep_key = KEYS[k]
  local remaining = redis.call("HINCRBY", dep_key, "remaining", -1)
  local waiting = redis.call("HGET", dep_key, "state") == "waiting"
  if waiting and (remaining == 0 or policy == "continue") then
    local dep = redis.call("HMGET", dep_key, "class", "queue", "payload")
    flow_release(dep_key, KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[4], KEYS[5], dep[3], expiry, enqueued_at)
    if remaining > 0 then
      -- Released before its count ran out: Ruby Wurk's flow_advance releases
      -- on the count alone, so the count must never reach zero again.
      redis.call("HSET", dep_key, "remaining", -1)
    end
    released[#released + 1] = dep[1]
    released[#released + 1] = dep[2]
  end
end
flow_settle_one(flow_key, now)
return { 1, released }
