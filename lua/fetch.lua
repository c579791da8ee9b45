-- Reliable fetch: acknowledges finished jobs, then claims up to ARGV[2] jobs
-- into this process's lists of claimed (not yet started) jobs, in one round
-- trip.
--
-- KEYS[3i-2] = queue:<name> (public), KEYS[3i-1] = its claimed list
--   (queue:<name>|<host>|<pid>|<nonce>|1), KEYS[3i] = its in-progress list
--   (…|0), for i = 1..ARGV[1], in fetch order;
-- KEYS[3n+1] = paused (Sidekiq Pro's SET of paused queue names),
-- KEYS[3n+2] = wurk:suspects, KEYS[3n+3] = dead;
-- KEYS[3n+4..] = super_fetch:recovered:<jid> of every acknowledged job.
-- ARGV[1] = n (queue triples), ARGV[2] = most jobs to claim (0 = acks only),
-- ARGV[3] = m: claim only from the first m triples (the others, paused
-- queues, are listed for their acks only), ARGV[4] = s: the oldest s jobs
-- claimed go straight to the in-progress list (the caller holds s free
-- slots and starts them at once), ARGV[5] = dead trim: drop entries scored
-- below this, ARGV[6] = keep at most this many dead entries, ARGV[7] = now
-- (float seconds, the dead score), ARGV[8] = now as a payload timestamp
-- (failed_at), then per triple i: a mode ("D" =
-- nothing else of ours is in that in-progress list, drop it whole; "L" =
-- LTRIM them off its tail when they are its c oldest entries, else LREM
-- each), a count c, and c payloads to ack.
--
-- Returns a flat array {triple index, state, payload, ...}, oldest first,
-- state "s" (started: in the in-progress list), "c" (claimed) or "x" (a
-- claimed suspect: recovered from a dead process after it started there,
-- it runs alone, so it and every job after it are only claimed) or "d"
-- (bytes that are not valid UTF-8, payload ""); then
-- {"!", key, error} for every key that
-- holds the wrong type (skipped, so one bad key never stops the other
-- queues), {"?", key, count} for every ack batch that matched fewer jobs
-- than it named (a bug or a foreign writer: the caller logs it loudly), and
-- {"P", triple index, ""} for every claimable queue found paused (the
-- caller must not block on it either).
--
-- A claimed payload whose bytes are not valid UTF-8 never reaches the
-- caller: ioredis would decode it with replacement characters, and every
-- later step that finds a payload by value (acknowledging it, filing it,
-- handing it back) would match nothing. It is filed in dead instead,
-- wrapped as Wurk::InvalidPayload with its bytes kept base64-encoded.
--
-- A queue in `paused` is not claimed from even when listed as claimable:
-- the caller's view of the set may be seconds old, and a pause must stop
-- every claim that runs after it.
--
-- Claiming is LRANGE + LTRIM + LPUSH per queue, not one LMOVE per job: three
-- commands for a whole batch. The jobs sit in the claimed list from the same
-- atomic step, so a crash right after loses nothing; a job moves on to the
-- in-progress list (one LMOVE) only when its perform is about to start,
-- unless it was claimed for a free slot and went there at once.

-- Whether the `count` oldest jobs of a private list (its right end) are
-- exactly the acknowledged ones, in any order: then one LTRIM removes them
-- all. Jobs are claimed in batches and mostly finish in claim order, so
-- this is the common case when other jobs of ours are still running.
local function tail_matches(list, pos, count)
  local tail = redis.pcall("LRANGE", list, -count, -1)
  if type(tail) ~= "table" or tail.err or #tail ~= count then return false end
  local wanted = {}
  for j = pos, pos + count - 1 do wanted[ARGV[j]] = (wanted[ARGV[j]] or 0) + 1 end
  for _, item in ipairs(tail) do
    local left = wanted[item]
    if not left or left == 0 then return false end
    wanted[item] = left - 1
  end
  return true
end

-- #include invalid_payload

local n = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local out = {}
local claimable = tonumber(ARGV[3])
local suspects = KEYS[3 * n + 2]
local start_left = tonumber(ARGV[4])
local pos = 9
for i = 1, n do
  local mode = ARGV[pos]
  local count = tonumber(ARGV[pos + 1])
  pos = pos + 2
  if count > 0 then
    local started = KEYS[3 * i]
    local matched = count
    if mode == "D" and redis.pcall("DEL", started) == 1 then
      matched = count
    elseif mode ~= "D" and tail_matches(started, pos, count) then
      redis.call("LTRIM", started, 0, -count - 1)
    else
      matched = 0
      for j = pos, pos + count - 1 do
        local removed = redis.pcall("LREM", started, -1, ARGV[j])
        if type(removed) == "table" and removed.err then
          out[#out + 1] = "!"; out[#out + 1] = started; out[#out + 1] = removed.err
          matched = count
          break
        end
        -- Not in progress: a failover may have lost the LMOVE that started
        -- it (and only that), so it is still in the claimed list. It ran.
        if removed == 0 then removed = redis.pcall("LREM", KEYS[3 * i - 1], -1, ARGV[j]) end
        if type(removed) ~= "number" then removed = 0 end
        matched = matched + removed
      end
    end
    if matched < count then
      out[#out + 1] = "?"; out[#out + 1] = started; out[#out + 1] = count - matched
    end
    pos = pos + count
  end
end
if #KEYS > 3 * n + 3 then
  redis.call("DEL", unpack(KEYS, 3 * n + 4))
end

-- A `paused` key of the wrong type pauses nothing, as the caller's own read does.
local function is_paused(public)
  local member = redis.pcall("SISMEMBER", KEYS[3 * n + 1], string.sub(public, 7))
  return member == 1
end

-- One look at the suspects set per call; members are only checked when
-- there are any (rare: after a process died mid-job).
local any_suspects = limit > 0 and redis.pcall("SCARD", suspects)
any_suspects = type(any_suspects) == "number" and any_suspects > 0

local want = limit
for i = 1, claimable do
  if want <= 0 then break end
  local public, claimed = KEYS[3 * i - 2], KEYS[3 * i - 1]
  local paused = is_paused(public)
  local items = paused and {} or redis.pcall("LRANGE", public, -want, -1)
  if paused then
    out[#out + 1] = "P"; out[#out + 1] = i; out[#out + 1] = ""
  elseif items.err then
    out[#out + 1] = "!"; out[#out + 1] = public; out[#out + 1] = items.err
  elseif #items > 0 then
    local size = #items
    -- LRANGE lists left to right; the rightmost is the oldest, fetched first.
    local oldest_first = {}
    for k = size, 1, -1 do oldest_first[#oldest_first + 1] = items[k] end
    local states, started, waiting = {}, {}, {}
    for k = 1, size do
      local state = "c"
      if not valid_utf8(oldest_first[k]) then
        state = "d"
      elseif any_suspects and redis.call("SISMEMBER", suspects, oldest_first[k]) == 1 then
        state = "x"
        start_left = 0
      elseif start_left > 0 then
        state = "s"
        start_left = start_left - 1
      end
      states[k] = state
      if state == "s" then started[#started + 1] = oldest_first[k] elseif state ~= "d" then waiting[#waiting + 1] = oldest_first[k] end
    end
    local pushed = #waiting > 0 and redis.pcall("LPUSH", claimed, unpack(waiting)) or 0
    if type(pushed) == "table" and pushed.err then
      -- The claimed list is unusable: leave the jobs on the public queue.
      out[#out + 1] = "!"; out[#out + 1] = claimed; out[#out + 1] = pushed.err
      start_left = start_left + #started
    else
      local direct = #started > 0 and redis.pcall("LPUSH", KEYS[3 * i], unpack(started)) or 0
      if type(direct) == "table" and direct.err then
        -- The in-progress list is unusable: they wait in the claimed list instead.
        out[#out + 1] = "!"; out[#out + 1] = KEYS[3 * i]; out[#out + 1] = direct.err
        redis.call("LPUSH", claimed, unpack(started))
        for k = 1, size do if states[k] == "s" then states[k] = "c" end end
      end
      redis.call("LTRIM", public, 0, -size - 1)
      for k = 1, size do
        local payload = oldest_first[k]
        if states[k] == "d" then
          local filed, err = pcall(bury_invalid, KEYS[3 * n + 3], payload, string.sub(public, 7), "not valid UTF-8", ARGV[8], ARGV[7], ARGV[5], ARGV[6])
          if not filed then
            -- Dead cannot take it: it stays at the head of its queue, never lost.
            redis.call("RPUSH", public, payload)
            out[#out + 1] = "!"; out[#out + 1] = KEYS[3 * n + 3]; out[#out + 1] = tostring(err)
          end
          payload = ""
        end
        out[#out + 1] = i; out[#out + 1] = states[k]; out[#out + 1] = payload
      end
      want = want - size
    end
  end
end
return out
