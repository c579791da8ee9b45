-- Reliable fetch: acknowledges finished jobs, then claims up to ARGV[2] jobs
-- into this process's private lists, in one round trip.
--
-- KEYS[2i-1] = queue:<name> (public), KEYS[2i] = its private list
--   (queue:<name>|<host>|<pid>|<nonce>|0), for i = 1..ARGV[1], in fetch order;
-- KEYS[2n+1] = paused (Sidekiq Pro's SET of paused queue names),
-- KEYS[2n+2..] = super_fetch:recovered:<jid> of every acknowledged job.
-- ARGV[1] = n (queue pairs), ARGV[2] = most jobs to claim (0 = acks only),
-- ARGV[3] = m: claim only from the first m pairs (the others, paused
-- queues, are listed for their acks only), then per pair i: a mode ("D" =
-- nothing else of ours is in that private list, drop it whole; "L" = LTRIM
-- them off its tail when they are its c oldest entries, else LREM each), a
-- count c, and c payloads to ack.
--
-- Returns a flat array {pair index, payload, ...}, oldest first, then
-- {"!", key, error} for every key that holds the wrong type (skipped, so one
-- bad key never stops the other queues), and {"P", pair index} for every
-- claimable queue found paused (the caller must not block on it either).
--
-- A queue in `paused` is not claimed from even when listed as claimable:
-- the caller's view of the set may be seconds old, and a pause must stop
-- every claim that runs after it.
--
-- Claiming is LRANGE + LTRIM + LPUSH per queue, not one LMOVE per job: three
-- commands for a whole batch. The jobs sit in the private list from the same
-- atomic step, so a crash right after loses nothing.

-- Whether the `count` oldest jobs of a private list (its right end) are
-- exactly the acknowledged ones, in any order: then one LTRIM removes them
-- all. Jobs are claimed in batches and mostly finish in claim order, so
-- this is the common case when other jobs of ours are still running.
local function tail_matches(private, pos, count)
  local tail = redis.pcall("LRANGE", private, -count, -1)
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
local pos = 4
for i = 1, n do
  local mode = ARGV[pos]
  local count = tonumber(ARGV[pos + 1])
  pos = pos + 2
  if count > 0 then
    local private = KEYS[2 * i]
    if mode == "D" then
      redis.pcall("DEL", private)
    elseif tail_matches(private, pos, count) then
      redis.call("LTRIM", private, 0, -count - 1)
    else
      for j = pos, pos + count - 1 do
        local removed = redis.pcall("LREM", private, -1, ARGV[j])
        if type(removed) == "table" and removed.err then
          out[#out + 1] = "!"; out[#out + 1] = private; out[#out + 1] = removed.err
          break
        end
      end
    end
    pos = pos + count
  end
end
if #KEYS > 2 * n + 1 then
  redis.call("DEL", unpack(KEYS, 2 * n + 2))
end

-- A `paused` key of the wrong type pauses nothing, as the caller's own read does.
local function is_paused(public)
  local member = redis.pcall("SISMEMBER", KEYS[2 * n + 1], string.sub(public, 7))
  return member == 1
end

local want = limit
for i = 1, claimable do
  if want <= 0 then break end
  local public, private = KEYS[2 * i - 1], KEYS[2 * i]
  local paused = is_paused(public)
  local items = paused and {} or redis.pcall("LRANGE", public, -want, -1)
  if paused then
    out[#out + 1] = "P"; out[#out + 1] = i
  elseif items.err then
    out[#out + 1] = "!"; out[#out + 1] = public; out[#out + 1] = items.err
  elseif #items > 0 then
    local size = #items
    -- LRANGE lists left to right; the rightmost is the oldest, fetched first.
    local oldest_first = {}
    for k = size, 1, -1 do oldest_first[#oldest_first + 1] = items[k] end
    local pushed = redis.pcall("LPUSH", private, unpack(oldest_first))
    if type(pushed) == "table" and pushed.err then
      -- The private list is unusable: leave the jobs on the public queue.
      out[#out + 1] = "!"; out[#out + 1] = private; out[#out + 1] = pushed.err
    else
      redis.call("LTRIM", public, 0, -size - 1)
      for k = 1, size do
        out[#out + 1] = i; out[#out + 1] = oldest_first[k]
      end
      want = want - size
    end
  end
end
return out
