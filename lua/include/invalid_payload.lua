-- Included (see src/redis/scripts.ts) by every script that finds a payload
-- it cannot hand on as a job. Such a payload is filed in `dead` wrapped the
-- way the processor wraps unparseable JSON, so Sidekiq's DeadSet#each and
-- Dead page can read it:
--   {"class":"Wurk::InvalidPayload","args":[<the raw text>],"queue":…,"jid":…,
--    "retry":false,"error_class":"InvalidPayloadError","error_message":…,"failed_at":…}
-- Bytes that are not valid UTF-8 cannot sit in a JSON string (ioredis would
-- decode them with replacement characters, and acknowledging them by value
-- would then match nothing), so they are kept base64-encoded in args[0].

-- Whether `s` is valid UTF-8 (no overlongs, no surrogates, nothing past
-- U+10FFFF). ASCII runs are skipped with string.find, so a plain payload
-- costs one scan in C.
local function valid_utf8(s)
  local i, n = 1, #s
  while true do
    i = string.find(s, "[\128-\255]", i)
    if not i then return true end
    local c = string.byte(s, i)
    local need, low, high
    if c >= 0xC2 and c <= 0xDF then need, low, high = 1, 0x80, 0xBF
    elseif c == 0xE0 then need, low, high = 2, 0xA0, 0xBF
    elseif c == 0xED then need, low, high = 2, 0x80, 0x9F
    elseif c >= 0xE1 and c <= 0xEF then need, low, high = 2, 0x80, 0xBF
    elseif c == 0xF0 then need, low, high = 3, 0x90, 0xBF
    elseif c >= 0xF1 and c <= 0xF3 then need, low, high = 3, 0x80, 0xBF
    elseif c == 0xF4 then need, low, high = 3, 0x80, 0x8F
    else return false end
    if i + need > n then return false end
    local second = string.byte(s, i + 1)
    if second < low or second > high then return false end
    for k = i + 2, i + need do
      local b = string.byte(s, k)
      if b < 0x80 or b > 0xBF then return false end
    end
    i = i + need + 1
  end
end

local BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

local function base64(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = string.byte(s, i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local chars = {}
    for k = 1, 4 do
      local index = math.floor(n / 2 ^ (6 * (4 - k))) % 64
      chars[k] = string.sub(BASE64, index + 1, index + 1)
    end
    if not b then chars[3] = "=" end
    if not c then chars[4] = "=" end
    out[#out + 1] = table.concat(chars)
  end
  return table.concat(out)
end

-- The dead entry for `raw` (text of the member as stored), found on `queue`
-- ("" when it names none) for `reason`, failed at `failed_at` (JSON number
-- text in the payload time dialect). Its jid is derived from the bytes and
-- the time, so two filings of one payload at one instant are one entry.
local function invalid_payload_entry(raw, queue, reason, failed_at)
  local arg = raw
  if not valid_utf8(raw) then
    arg = base64(raw)
    reason = reason .. " (its bytes are kept base64-encoded in args[0])"
  end
  local parts = {
    '{"class":"Wurk::InvalidPayload","args":[', cjson.encode(arg), ']',
  }
  if queue ~= "" then parts[#parts + 1] = ',"queue":' .. cjson.encode(queue) end
  parts[#parts + 1] = ',"jid":"' .. string.sub(redis.sha1hex(raw .. failed_at), 1, 24) .. '"'
  parts[#parts + 1] = ',"retry":false,"error_class":"InvalidPayloadError","error_message":'
  parts[#parts + 1] = cjson.encode("invalid job payload: " .. reason)
  parts[#parts + 1] = ',"failed_at":' .. failed_at .. '}'
  return table.concat(parts)
end

-- Files the wrapped entry in `dead` (scored `score`), trimmed as
-- Sidekiq's DeadSet#kill trims: nothing scored below `cutoff`, at most
-- `max_jobs` entries.
local function bury_invalid(dead, raw, queue, reason, failed_at, score, cutoff, max_jobs)
  redis.call("ZADD", dead, score, invalid_payload_entry(raw, queue, reason, failed_at))
  redis.call("ZREMRANGEBYSCORE", dead, "-inf", "(" .. cutoff)
  redis.call("ZREMRANGEBYRANK", dead, 0, -tonumber(max_jobs) - 1)
end
