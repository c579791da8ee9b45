-- Reliable fetch's one round trip: counts the successes of the batch jobs
-- it acknowledges, acknowledges finished jobs, marks claimed jobs started,
-- then claims up to ARGV[2] jobs into this process's
-- lists of claimed (not yet started) jobs. Its one TypeScript mirror (keys,
-- arguments and reply) is src/server/fetch/reliable/fetch-script.ts.
--
-- For i = 1..n, one triple per queue, in fetch order:
-- KEYS[3i-2]   queue:<name> (public)
-- KEYS[3i-1]   its claimed list, queue:<name>|<host>|<pid>|<nonce>|1
-- KEYS[3i]     its in-progress list, …|0
-- then:
-- KEYS[3n+1]   paused (Sidekiq Pro's SET of paused queue names)
-- KEYS[3n+2]   wurk:suspects
-- KEYS[3n+3..] super_fetch:recovered:<jid> of every acknowledged job
--
-- ARGV[1]      n, the number of queue triples
-- ARGV[2]      most jobs to claim (0 = acks and starts only)
-- ARGV[3]      m: claim only from the first m triples (the others, paused
--              queues or queues named for their acks and starts only, are
--              not claimed from)
-- ARGV[4]      s: the oldest s jobs claimed go straight to the in-progress
--              list (the caller holds s free slots and starts them at once)
-- ARGV[5]      g, the number of batch groups; when g > 0, ARGV[6..9] are
--              the batch rules' expiry, now, callback jid prefix and
--              linger (lua/batch_settle.lua's ARGV[4], 5, 6 and 8), then
--              per group:
--   bid        a batch
--   k          how many jids follow
--   jid×k      acknowledged jobs of that batch (they are acknowledged in
--              this call) whose successes are counted, before any ack, by
--              the batch rules (lua/include/batch_rules.lua); k = 0 asks
--              only whether the batch is invalidated
-- then, per triple i:
--   mode       "D" = nothing else of ours is in that in-progress list: drop
--              it whole when its length agrees; "L" = LTRIM them off its
--              tail when they are its c oldest entries, else LREM each
--   c          the count of payloads to ack
--   b[?!]      the count b of claimed jobs to start (the b oldest of its
--              claimed list move to its in-progress list: their performs
--              are about to begin), suffixed "?" when some of them were
--              claimed without a look at the suspects set (a blocking BLMOVE
--              cannot look), "!" when the start rides behind that BLMOVE (it
--              also looks at `paused`)
--   payload×c  with "L" only. "D" names no payloads: a payload passed into
--              Lua costs Redis more than the LREM itself (about 130 µs per
--              100 KB), and a whole-list DEL needs none.
--
-- Returns a flat array of {head, a, b} entries, jobs oldest first:
--   {i, "b", payload}  begun: one of the b claimed jobs just moved to the
--                      in-progress list
--   {i, "y", payload}  (with "?" or "!") the next of them is a suspect,
--                      which runs alone: it and the jobs after it stay
--                      claimed
--   then for the jobs claimed by this call:
--   {i, "s", payload}  started: claimed straight into the in-progress list
--   {i, "c", payload}  claimed
--   {i, "x", payload}  a claimed suspect (recovered from a dead process
--                      after it started there, it runs alone, so it and
--                      every job after it are only claimed)
--   {"!", key, error}  a key that holds the wrong type (skipped, so one bad
--                      key never stops the other queues)
--   {"?", key, count}  an ack batch that matched fewer jobs than it named (a
--                      bug or a foreign writer: the caller logs it loudly)
--   {"D", i, count}    a "D" batch not dropped (the list holds more or less
--                      than those jobs: nothing was removed, the caller
--                      sends them again by value)
--   {"P", i, ""}       a claimable queue found paused (the caller must not
--                      block on it either); with "!", a start that moved
--                      nothing because its queue is paused
--   {"B", bid, inv}    a batch group done: its successes counted (a batch
--                      that no longer exists counts nothing), inv 1 when
--                      the batch is invalidated, else 0; first, in order
--   {"E", bid, error}  a batch group whose count (or read) failed: the
--                      error is caught, so one broken batch never stops
--                      the acks, starts and claims of the call. Its jobs
--                      are still acknowledged: they ran, and must not run
--                      again because their batch cannot count them.
--
-- Payloads go out as stored. The caller reads them as bytes and files in
-- dead any that is not valid UTF-8 (ioredis would decode it with replacement
-- characters, and every later step that finds a payload by value would
-- match nothing): checking here, in Lua, costs a millisecond per 100 KB.
--
-- A queue in `paused` is not claimed from even when listed as claimable:
-- the caller's view of the set may be seconds old, and a pause must stop
-- every claim that runs after it.
--
-- Claiming is LRANGE + LTRIM + LPUSH per queue, not one LMOVE per job: three
-- commands for a whole batch. The jobs sit in the claimed list from the same
-- atomic step, so a crash right after loses nothing; a job moves on to the
-- in-progress list only when its perform is about to start (the starts of
-- one turn of the caller's event loop travel together, with its acks),
-- unless it was claimed for a free slot and went there at once.

-- Acknowledged payloads longer than this are removed one LREM each, never
-- compared by reading the list's tail: every payload read into Lua costs
-- about a microsecond per 1 KB, more than the LREMs it saves.
local LARGE_PAYLOAD = 2048

-- Whether the `count` oldest jobs of a private list (its right end) are
-- exactly the acknowledged ones, in any order: then one LTRIM removes them
-- all. Jobs are claimed in batches and mostly finish in claim order, so
-- this is the common case when other jobs of ours are still running.
local function tail_matches(list, pos, count)
  for j = pos, pos + count - 1 do
    if #ARGV[j] > LARGE_PAYLOAD then return false end
  end
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

local n = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local out = {}
local claimable = tonumber(ARGV[3])
local suspects = KEYS[3 * n + 2]
local start_left = tonumber(ARGV[4])
local begin, look = {}, {}
local groups = tonumber(ARGV[5])
local pos = 6
-- A batch's successes are counted in the same step as their jobs' acks: a
-- crash can never land one without the other. Under pcall, per batch: a
-- Redis script is not rolled back by an error, and an uncaught one would
-- fail every later call that carries these acks again.
if groups > 0 then
-- #include batch_rules
  local ctx = {
    expiry = ARGV[6], now = ARGV[7], prefix = ARGV[8], linger = ARGV[9],
    queues = "queues", dead_batches = "dead-batches", pushed = 0,
  }
  pos = 10
  for _ = 1, groups do
    local bid, k = ARGV[pos], tonumber(ARGV[pos + 1])
    local own = batch_keys(bid)
    local ok, reply
    if k > 0 then
      ok, reply = pcall(settle_batch, ctx, own, bid, "success", { unpack(ARGV, pos + 2, pos + 1 + k) }, "")
      -- "success" is an outcome settle_batch knows: it answers a reply, never nil and an error.
      if ok then reply = reply[8] end
    else
      ok, reply = pcall(redis.call, "HGET", own.batch, "invalidated")
      if ok then reply = reply == "1" and 1 or 0 end
    end
    if ok then
      out[#out + 1] = "B"; out[#out + 1] = bid; out[#out + 1] = reply
    else
      out[#out + 1] = "E"; out[#out + 1] = bid
      out[#out + 1] = type(reply) == "table" and tostring(reply.err) or tostring(reply)
    end
    pos = pos + 2 + k
  end
end
for i = 1, n do
  local mode = ARGV[pos]
  local count = tonumber(ARGV[pos + 1])
  local starts, mark = string.match(ARGV[pos + 2], "^(%d+)([%?!]?)$")
  begin[i] = tonumber(starts)
  look[i] = mark

  pos = pos + 3
  if count > 0 and mode == "D" then
    -- Dropped whole only when the list holds exactly the acknowledged jobs:
    -- a caller whose count of its own started jobs came out low (a bug) must
    -- not take a job that is still running with it, which a crash would
    -- then lose. Without their payloads nothing else can be removed here.
    local started = KEYS[3 * i]
    local size = redis.pcall("LLEN", started)
    if size == count then
      redis.call("DEL", started)
    elseif type(size) == "table" then
      out[#out + 1] = "!"; out[#out + 1] = started; out[#out + 1] = size.err
    else
      out[#out + 1] = "D"; out[#out + 1] = i; out[#out + 1] = count
    end
  elseif count > 0 then
    local started = KEYS[3 * i]
    local matched = count
    if tail_matches(started, pos, count) then
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
if #KEYS > 3 * n + 2 then
  redis.call("DEL", unpack(KEYS, 3 * n + 3))
end

-- A `paused` key of the wrong type pauses nothing, as the caller's own read does.
local function is_paused(public)
  local member = redis.pcall("SISMEMBER", KEYS[3 * n + 1], string.sub(public, 7))
  return member == 1
end

-- One look at the suspects set per call, only when something asks for it
-- (members are checked only when there are any: rare, after a process died
-- mid-job).
local any_suspects
local function suspects_exist()
  if any_suspects == nil then
    local size = redis.pcall("SCARD", suspects)
    any_suspects = type(size) == "number" and size > 0
  end
  return any_suspects
end

local function is_suspect(payload)
  return redis.call("SISMEMBER", suspects, payload) == 1
end

-- Moves the b oldest jobs of triple i's claimed list to its in-progress
-- list (fewer when some were handed back meanwhile). The push comes before
-- the trim: a failing push leaves them claimed, never in neither list. With
-- `mark` "?" or "!", a suspect among them stops the move there ("y"); with
-- "!" (a start riding behind a BLMOVE, which cannot look at `paused`), a
-- paused queue moves nothing ("P").
local function start_claimed(i, b, mark)
  local claimed, started = KEYS[3 * i - 1], KEYS[3 * i]
  if mark == "!" and is_paused(KEYS[3 * i - 2]) then
    out[#out + 1] = "P"; out[#out + 1] = i; out[#out + 1] = ""
    return
  end
  local look = mark ~= "" and suspects_exist()
  if b == 1 and look then
    local oldest = redis.pcall("LINDEX", claimed, -1)
    if type(oldest) == "string" and is_suspect(oldest) then
      out[#out + 1] = i; out[#out + 1] = "y"; out[#out + 1] = oldest
      return
    end
  end
  if b == 1 then
    local moved = redis.pcall("LMOVE", claimed, started, "RIGHT", "LEFT")
    if type(moved) == "table" and moved.err then
      -- LMOVE's error names no key: the claimed list is a list unless it is the culprit.
      out[#out + 1] = "!"; out[#out + 1] = redis.call("TYPE", claimed).ok == "list" and started or claimed; out[#out + 1] = moved.err
    elseif moved then
      out[#out + 1] = i; out[#out + 1] = "b"; out[#out + 1] = moved
    end
    return
  end
  local items = redis.pcall("LRANGE", claimed, -b, -1)
  if items.err then
    out[#out + 1] = "!"; out[#out + 1] = claimed; out[#out + 1] = items.err
    return
  end
  if #items == 0 then return end
  local oldest_first, suspect = {}, nil
  for k = #items, 1, -1 do
    if look and is_suspect(items[k]) then
      suspect = items[k]
      break
    end
    oldest_first[#oldest_first + 1] = items[k]
  end
  if #oldest_first == 0 then
    out[#out + 1] = i; out[#out + 1] = "y"; out[#out + 1] = suspect
    return
  end
  local pushed = redis.pcall("LPUSH", started, unpack(oldest_first))
  if type(pushed) == "table" and pushed.err then
    out[#out + 1] = "!"; out[#out + 1] = started; out[#out + 1] = pushed.err
    return
  end
  redis.call("LTRIM", claimed, 0, -#oldest_first - 1)
  for _, payload in ipairs(oldest_first) do
    out[#out + 1] = i; out[#out + 1] = "b"; out[#out + 1] = payload
  end
  if suspect then
    out[#out + 1] = i; out[#out + 1] = "y"; out[#out + 1] = suspect
  end
end

for i = 1, n do
  if begin[i] > 0 then start_claimed(i, begin[i], look[i]) end
end


local claim_looks = limit > 0 and suspects_exist()

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
      if claim_looks and is_suspect(oldest_first[k]) then
        state = "x"
        start_left = 0
      elseif start_left > 0 then
        state = "s"
        start_left = start_left - 1
      end
      states[k] = state
      if state == "s" then started[#started + 1] = oldest_first[k] else waiting[#waiting + 1] = oldest_first[k] end
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
        out[#out + 1] = i; out[#out + 1] = states[k]; out[#out + 1] = oldest_first[k]
      end
      want = want - size
    end
  end
end
return out
