-- Basic fetch without blocking: pops the oldest job of the first queue, in
-- the given order, that has one and is not paused (Sidekiq's BRPOP order,
-- plus Sidekiq Pro's `paused` set checked in the same step, so a pause
-- stops every pop that runs after it). The caller blocks with BRPOP only
-- when this finds nothing.
--
-- KEYS[1..n] = queue:<name> in fetch order, KEYS[n+1] = paused.
-- ARGV[i] = the name of KEYS[i].
--
-- Returns {index, payload} for a job, else {0, index of each paused queue...}.
local n = #ARGV
local paused = {}
for i = 1, n do
  -- A `paused` key of the wrong type pauses nothing.
  if redis.pcall("SISMEMBER", KEYS[n + 1], ARGV[i]) == 1 then
    paused[#paused + 1] = i
  else
    local job = redis.pcall("RPOP", KEYS[i])
    if type(job) == "string" then return {i, job} end
  end
end
local out = {0}
for _, i in ipairs(paused) do out[#out + 1] = i end
return out
