-- Takes a unique job's lock for its push (docs/internals/spec/contract.md §5, Wurk's layout).
--
-- KEYS[1] = unique:<digest>
-- ARGV[1] = the jid pushing, ARGV[2] = lock lifetime in whole seconds
--
-- Returns 1 when this push may go ahead: the lock was free and is now this
-- jid's, or it already is this jid's (a re-push of the same job, e.g. a
-- retry of a push whose reply was lost). Returns 0 when another jid holds
-- it: that push writes nothing. One script, so two pushes racing from two
-- connections cannot both see the lock free.
local holder = redis.call("GET", KEYS[1])
if holder == ARGV[1] then
  return 1
end
if holder then
  return 0
end
redis.call("SET", KEYS[1], ARGV[1], "EX", ARGV[2])
return 1
