-- Moves due jobs from `schedule` or `retry` onto their queues, each in one
-- step (ZREM and LPUSH together: no moment where the job is in neither place).
--
-- KEYS[1] = the sorted set (schedule or retry), KEYS[2] = dead, KEYS[3] = queues.
-- ARGV[1] = now (float seconds; members scored at or below it are due),
-- ARGV[2] = most jobs to move, ARGV[3] = the new enqueued_at (JSON number
-- text), ARGV[4] = dead trim: drop entries scored below this, ARGV[5] =
-- keep at most this many dead entries, ARGV[6] = the queue key prefix
-- ("queue:"; a job's queue key is only known once its payload is read).
--
-- Returns {moved, sent to dead}.
--
-- A member that is not a job (not a JSON object naming its queue, or bytes
-- that are not valid UTF-8) is filed in dead wrapped as Wurk::InvalidPayload
-- (lua/include/invalid_payload.lua), never raw: Sidekiq's DeadSet#each
-- parses every entry, and one bad entry would break its Dead page.
--
-- enqueued_at is re-stamped by splicing the payload text, never with
-- cjson.encode, which rewrites numbers (1.0 -> 1, big integers to floats)
-- and escapes "/": args must come out byte for byte. cjson.decode is only
-- used to read `queue` and to tell a job from garbage.

-- The byte range of the value of a top-level member `name` of JSON object
-- text `s` (nested objects, arrays and strings skipped), or nil.
local function top_level_value(s, name)
  local depth, i, n = 0, 1, #s
  local expect_key, key, value_start = false, nil, nil
  while i <= n do
    local c = string.sub(s, i, i)
    if c == '"' then
      local j = i + 1
      while true do
        local q = string.find(s, '["\\]', j)
        if not q then return nil end
        if string.sub(s, q, q) == "\\" then j = q + 2 else j = q; break end
      end
      if depth == 1 and expect_key then
        key = string.sub(s, i + 1, j - 1)
        expect_key = false
      end
      i = j + 1
    elseif c == "{" or c == "[" then
      depth = depth + 1
      if depth == 1 then expect_key = true end
      i = i + 1
    elseif c == "}" or c == "]" then
      depth = depth - 1
      i = i + 1
    elseif c == "," and depth == 1 then
      expect_key = true
      key = nil
      i = i + 1
    elseif c == ":" and depth == 1 then
      if key == name then
        value_start = i + 1
        local stop = string.find(s, "[,}]", value_start)
        if not stop then return nil end
        return value_start, stop - 1
      end
      i = i + 1
    else
      i = i + 1
    end
  end
  return nil
end

local function restamp(payload, stamp)
  local first, last = top_level_value(payload, "enqueued_at")
  if first then
    local current = string.sub(payload, first, last)
    -- Only a plain number is replaced; anything else is left as it is.
    if string.match(current, "^%s*%-?[%d%.eE%+%-]+%s*$") then
      return string.sub(payload, 1, first - 1) .. stamp .. string.sub(payload, last + 1)
    end
    return payload
  end
  local close = string.find(payload, "}%s*$")
  if string.match(payload, "^%s*{%s*}%s*$") then
    return string.sub(payload, 1, close - 1) .. '"enqueued_at":' .. stamp .. "}"
  end
  return string.sub(payload, 1, close - 1) .. ',"enqueued_at":' .. stamp .. "}"
end

-- #include invalid_payload

-- Why `payload` is not a job, or nil when it is one (then also its queue).
local function not_a_job(payload)
  if not valid_utf8(payload) then return "is not valid UTF-8" end
  local ok, job = pcall(cjson.decode, payload)
  if not ok then return "is not valid JSON" end
  if type(job) ~= "table" or not string.match(payload, "}%s*$") then return "is not a JSON object" end
  if type(job.queue) ~= "string" or job.queue == "" then return "names no queue" end
  return nil, job.queue
end

local due = redis.call("ZRANGE", KEYS[1], "-inf", ARGV[1], "BYSCORE", "LIMIT", 0, tonumber(ARGV[2]))
local moved, buried = 0, 0
for _, payload in ipairs(due) do
  local reason, queue = not_a_job(payload)
  if not reason then
    redis.call("SADD", KEYS[3], queue)
    redis.call("LPUSH", ARGV[6] .. queue, restamp(payload, ARGV[3]))
    moved = moved + 1
  else
    -- Parked in dead (where the Web UI shows it) rather than left at the
    -- front of the set, where it would block every later job.
    bury_invalid(KEYS[2], payload, "", "member of " .. KEYS[1] .. " " .. reason, ARGV[3], ARGV[1], ARGV[4], ARGV[5])
    buried = buried + 1
  end
  redis.call("ZREM", KEYS[1], payload)
end
return {moved, buried}
