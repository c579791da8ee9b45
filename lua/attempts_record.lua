--[[
attempts_record: append one attempt to a job's attempts log, keep the log
bounded and give it a TTL, in one round trip (docs/job-history.md).

KEYS[1]  the log, attempts:<jid> (a LIST of JSON records, oldest first)
ARGV[1]  the record (JSON text)
ARGV[2]  at most this many records are kept: the oldest go first
ARGV[3]  TTL in seconds, re-stamped on every append so the log outlives
         the job's last attempt by that long
ARGV[4]  at most this many bytes in one record

Returns the log's length after the append, or -1 when the record is over
its byte cap (refused whole: a record cut in the middle is not JSON).

Called best-effort after the job is filed: an error here (WRONGTYPE, a
read-only replica, OOM) is logged and counted by the caller, never the
job's fate.
]]
if #ARGV[1] > tonumber(ARGV[4]) then
  return -1
end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
redis.call('EXPIRE', KEYS[1], ARGV[3])
return redis.call('LLEN', KEYS[1])
