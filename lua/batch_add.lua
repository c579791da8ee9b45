--[[
batch_add: registers one job (or a bulk push's jobs) in a batch before they are pushed
(docs/batches.md). Registering first is what keeps a batch from finishing
early or hanging: a job cannot run (and settle into the batch) before the
batch counts it.

KEYS[1]  b-<bid>        (the batch hash)
KEYS[2]  b-<bid>-jids   (jids not yet succeeded or died)
ARGV[1]  jid
ARGV[2]  expiry in seconds, stamped on both keys only when they have none,
         so a finished batch's shorter expiry is never lengthened
ARGV[3]  "add", or "remove" to take back a registration whose push did not
         happen (a client middleware dropped it, or the push failed); the
         batch is still held open then, so nothing can have fired
ARGV[4..] more jids, registered (or taken back) the same way in the same
         call: a bulk push's jobs count in one round trip

Returns how many jids were added (total and pending counted up by as
many) or removed (counted down): for one jid 1, or 0 when there was nothing
to do (a re-push counts once); -1 when there is no such batch (expired or
never opened): the caller refuses the push.
]]
if redis.call("EXISTS", KEYS[1]) == 0 then
  return -1
end
local jids = { ARGV[1] }
for i = 4, #ARGV do
  jids[#jids + 1] = ARGV[i]
end
local step = ARGV[3] == "remove" and -1 or 1
local changed = 0
for _, jid in ipairs(jids) do
  if step == -1 then
    changed = changed + redis.call("SREM", KEYS[2], jid)
  else
    changed = changed + redis.call("SADD", KEYS[2], jid)
  end
end
if changed == 0 then
  return 0
end
redis.call("HINCRBY", KEYS[1], "total", step * changed)
redis.call("HINCRBY", KEYS[1], "pending", step * changed)
if step == -1 then
  return changed
end
-- TTL == -1 (no expiry) rather than EXPIRE NX, which Redis 6.2 lacks.
for _, key in ipairs(KEYS) do
  if redis.call("TTL", key) == -1 then
    redis.call("EXPIRE", key, ARGV[2])
  end
end
return changed
