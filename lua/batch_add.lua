--[[
batch_add: registers one job in a batch before the job is pushed
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

Returns 1 when the jid was added (total and pending counted up) or removed
(counted down), 0 when there was nothing to do (a re-push counts once), -1
when there is no such batch (expired or never opened): the caller refuses
the push.
]]
if redis.call("EXISTS", KEYS[1]) == 0 then
  return -1
end
if ARGV[3] == "remove" then
  if redis.call("SREM", KEYS[2], ARGV[1]) == 0 then
    return 0
  end
  redis.call("HINCRBY", KEYS[1], "total", -1)
  redis.call("HINCRBY", KEYS[1], "pending", -1)
  return 1
end
if redis.call("SADD", KEYS[2], ARGV[1]) == 0 then
  return 0
end
redis.call("HINCRBY", KEYS[1], "total", 1)
redis.call("HINCRBY", KEYS[1], "pending", 1)
-- TTL == -1 (no expiry) rather than EXPIRE NX, which Redis 6.2 lacks.
for _, key in ipairs(KEYS) do
  if redis.call("TTL", key) == -1 then
    redis.call("EXPIRE", key, ARGV[2])
  end
end
return 1
