-- park_record(unsettled, retry, dead, record): files one JSON record
-- {set, score, payload} of a failure nobody could file yet, in the first of
-- these writes that succeeds: wurk:unsettled (filed later by any live
-- process), the record's own set at its score, dead now. Returns true when
-- one of them took it. A script is not rolled back when a command fails, so
-- each write is tried with pcall and the next one is the fallback.
local function park_applied(reply)
  return type(reply) ~= "table" or reply.err == nil
end

local function park_record(unsettled, retry, dead, record)
  if park_applied(redis.pcall("RPUSH", unsettled, record)) then return true end
  local ok, fields = pcall(cjson.decode, record)
  if not ok or type(fields) ~= "table" or type(fields.payload) ~= "string" then return false end
  local set = fields.set == "retry" and retry or dead
  if tonumber(fields.score) and park_applied(redis.pcall("ZADD", set, fields.score, fields.payload)) then return true end
  local now = redis.call("TIME")
  return park_applied(redis.pcall("ZADD", dead, now[1] .. "." .. string.format("%06d", tonumber(now[2])), fields.payload))
end
