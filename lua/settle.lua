-- Files a job that ran and failed in `retry` or `dead` and acknowledges it,
-- in one step: a crash between the two can neither lose it nor run it again.
--
-- KEYS[1] = the sorted set (retry or dead), KEYS[2] = the list the fetched
-- job sits in (its private list, or wurk:repeat_orphans), KEYS[3] =
-- super_fetch:recovered:<jid>.
-- ARGV[1] = score (float seconds), ARGV[2] = payload to file, ARGV[3] = the
-- payload as it sits in KEYS[2], ARGV[4] = "L" to take it from KEYS[2] first
-- ("" for basic fetch, where the job is in no list), ARGV[5] = when filing
-- in dead, drop entries scored below this ("" = no trim), ARGV[6] = keep at
-- most this many dead entries.
--
-- Returns 1 when filed, 0 when the job was no longer in KEYS[2]: another
-- process recovered it (it will run again there), or an earlier attempt of
-- this very call was applied and only its reply was lost. Filing it a second
-- time would duplicate it either way.
-- Looked up before any write, removed after the ZADD: a script is not rolled
-- back when a command fails (a set of the wrong type), and the job must not
-- leave its list unless it has been filed.
if ARGV[4] == "L" and not redis.call("LPOS", KEYS[2], ARGV[3]) then
  return 0
end
redis.call("ZADD", KEYS[1], ARGV[1], ARGV[2])
if ARGV[4] == "L" then
  redis.call("LREM", KEYS[2], 1, ARGV[3])
end
if ARGV[5] ~= "" then
  redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", "(" .. ARGV[5])
  redis.call("ZREMRANGEBYRANK", KEYS[1], 0, -tonumber(ARGV[6]) - 1)
end
redis.call("DEL", KEYS[3])
return 1
