-- Claims one periodic slot for this process, so that however many processes
-- tick the same entry, each slot is pushed by exactly one of them. One script
-- because "is it newer than last_slot, is the slot lock free, is the previous
-- run done" must be decided and recorded without another claimer in between.
--
-- KEYS[1] = periodic:running:<pjid>   running lock (until_executed), value = owning jid
-- KEYS[2] = periodic:last_slot:<pjid> newest slot claimed (epoch seconds)
-- KEYS[3] = periodic:lock:<pjid>:<slot> per-slot NX lock
-- ARGV[1] = slot (epoch seconds)
-- ARGV[2] = mode: "until_executed" or ""
-- ARGV[3] = slot lock TTL (seconds)
-- ARGV[4] = jid the job will be pushed with (owner of both locks)
-- ARGV[5] = running lock TTL while queued (seconds)
-- ARGV[6] = catch-up rule: "" (catch_up on: fire), "prime" (catch_up off:
--           a new entry's first slot only sets last_slot), "late" (catch_up
--           off and this slot is already late: advance last_slot, never fire)
--
-- Returns {1, previous last_slot or ""} when won; 0 when the slot is not
-- newer or another process holds it; 2 when blocked by a run still holding
-- the running lock; 3 when the slot was primed or passed over (catch_up off).
local slot = tonumber(ARGV[1])
local last = redis.call("GET", KEYS[2])
local last_number = nil
if last then
  last_number = tonumber(last)
  if last_number == nil then
    return redis.error_reply("ERR " .. KEYS[2] .. " does not hold an epoch: " .. last)
  end
end

if ARGV[6] ~= "" then
  if not last then
    redis.call("SET", KEYS[2], ARGV[1])
    return 3
  end
  if ARGV[6] == "late" then
    if last_number < slot then
      redis.call("SET", KEYS[2], ARGV[1])
      return 3
    end
    return 0
  end
end

if last_number and last_number >= slot then
  return 0
end
if ARGV[2] == "until_executed" and redis.call("EXISTS", KEYS[1]) == 1 then
  return 2
end
if not redis.call("SET", KEYS[3], ARGV[4], "NX", "EX", ARGV[3]) then
  return 0
end
redis.call("SET", KEYS[2], ARGV[1])
if ARGV[2] == "until_executed" then
  redis.call("SET", KEYS[1], ARGV[4], "EX", ARGV[5])
end
return {1, last or ""}
