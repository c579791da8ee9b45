-- Recovers one private list of a process that is dead.
--
-- Its list of claimed jobs that never started (ARGV[10] = "1") goes back to
-- the head of the public queue as it was, uncounted: none of them can have
-- killed the process. A job of its in-progress list (perform started
-- there) may have: it counts one recovery (super_fetch:recovered:<jid>),
-- becomes a suspect (wurk:suspects, so it runs alone and takes no innocent
-- job down with it) and goes behind every job waiting, so the next claim
-- does not take it together with the jobs just handed back; recovered more
-- than ARGV[5] times, it is parked in wurk:repeat_orphans to be filed in
-- dead with the reason.
--
-- KEYS[1] = private list, KEYS[2] = public queue, KEYS[3] = the owner's
-- heartbeat hash (<identity>), KEYS[4] = wurk:last_beat, KEYS[5] = queues,
-- KEYS[6] = wurk:repeat_orphans, KEYS[7] = wurk:suspects.
-- ARGV[1] = the owner's identity ("" for the pre-nonce list shape, whose
-- owner the caller already found dead by its pid), ARGV[2] = orphan
-- threshold in seconds, ARGV[3] = now (epoch seconds), ARGV[4] = recovery
-- counter key prefix (super_fetch:recovered:), ARGV[5] = max orphanings,
-- ARGV[6] = counter TTL in seconds, ARGV[7] = periodic running-lock key
-- prefix, ARGV[8] = running-lock TTL, ARGV[9] = queue name, ARGV[10] = "1"
-- when KEYS[1] holds claimed jobs that never started, else "0".
--
-- Returns {moved, parked}, {-1, 0} when the owner is alive, or {-2, 0} when
-- KEYS[1] is not a list (left alone: never a reason to fail the whole pass).
--
-- The liveness check sits inside the script so that a process that beats
-- between the caller's look and the move is never robbed of its jobs.
-- #include invalid_payload

if redis.call("TYPE", KEYS[1]).ok ~= "list" then return {-2, 0} end
if ARGV[1] ~= "" then
  if redis.call("EXISTS", KEYS[3]) == 1 then return {-1, 0} end
  local ok, beat = pcall(redis.call, "HGET", KEYS[4], ARGV[1])
  if not ok then return {-1, 0} end -- unreadable: count it as alive
  if beat and tonumber(ARGV[3]) - (tonumber(beat) or 0) <= tonumber(ARGV[2]) then
    return {-1, 0}
  end
end

local unstarted = ARGV[10] == "1"
local moved, parked = 0, 0
while true do
  -- Unstarted: newest claim first (the left end), each to the right end of
  -- the queue, so the oldest claim ends up rightmost: the next one fetched.
  -- Started: oldest first, each to the left end, so among themselves too
  -- the oldest is fetched first. Read here, popped only once it is written
  -- elsewhere: a script is not rolled back when a command fails (a key of
  -- the wrong type), and the job must then still be in the list.
  local job = redis.call("LINDEX", KEYS[1], unstarted and 0 or -1)
  if not job then break end
  local ok, decoded = pcall(cjson.decode, job)
  local fields = (ok and type(decoded) == "table") and decoded or {}
  local count, counter = 0, nil
  -- Bytes that are not valid UTF-8 never started anywhere (fetch files them
  -- in dead as it claims them): back uncounted, to be filed by the next claim.
  local started = not unstarted and valid_utf8(job)
  if started and type(fields.jid) == "string" then
    -- Read now, written only once the job is filed elsewhere: a push that
    -- fails (a key of the wrong type) ends the script with the job still
    -- here, and the next pass must not count this recovery a second time.
    counter = ARGV[4] .. fields.jid
    count = (tonumber(redis.call("GET", counter)) or 0) + 1
  end
  if count > tonumber(ARGV[5]) then
    redis.call("RPUSH", KEYS[6], job)
  elseif not started then
    redis.call("RPUSH", KEYS[2], job)
  else
    redis.call("LPUSH", KEYS[2], job)
  end
  if counter then
    redis.call("SET", counter, count, "EX", ARGV[6])
  end
  redis.call(unstarted and "LPOP" or "RPOP", KEYS[1])
  if count > tonumber(ARGV[5]) then
    parked = parked + 1
  else
    if started then
      redis.pcall("SADD", KEYS[7], job) -- only a hint: a failure costs the isolation, never the job
    end
    moved = moved + 1
    -- A periodic job that holds its entry's running lock until executed:
    -- the lock must follow the job back onto the queue, or the ticker would
    -- enqueue the next slot while this one is still pending.
    if fields.periodic_until_executed == true and type(fields.periodic_pjid) == "string"
        and type(fields.jid) == "string" then
      local lock = ARGV[7] .. fields.periodic_pjid
      local held = redis.pcall("GET", lock)
      if held == false then
        redis.pcall("SET", lock, fields.jid, "EX", ARGV[8])
      elseif held == fields.jid then
        redis.pcall("EXPIRE", lock, ARGV[8])
      end
    end
  end
end
if moved > 0 then redis.call("SADD", KEYS[5], ARGV[9]) end
return {moved, parked}
