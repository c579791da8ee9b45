-- Drops from `lmtr-list` the names whose metadata hash has expired (the
-- limiter went unused for its ttl), so the registry does not grow for ever
-- with interpolated names nobody uses any more.
--
-- KEYS[1]     lmtr-list
-- KEYS[2..n]  lmtr:<name> of each candidate, in the order of ARGV
-- ARGV[1..]   the candidates' names
--
-- Returns the number of names dropped. A hash re-created since the caller
-- read it keeps its name: the check and the SREM are one step.
local dropped = 0
for i, name in ipairs(ARGV) do
  if redis.call('EXISTS', KEYS[i + 1]) == 0 then
    dropped = dropped + redis.call('SREM', KEYS[1], name)
  end
end
return dropped
