-- Undoes a won claim whose push then failed, so the slot is not lost: puts
-- last_slot back (only if it still is this slot: a later slot may have been
-- claimed since), drops the slot lock and releases the running lock the
-- claim took. All in one step: as a separate call made first, a release
-- failing (Redis down, the usual reason the push failed) skipped the
-- rollback altogether.
--
-- KEYS[1] = periodic:last_slot:<pjid>
-- KEYS[2] = periodic:lock:<pjid>:<slot>
-- KEYS[3] = periodic:running:<pjid>
-- ARGV[1] = slot (epoch seconds)
-- ARGV[2] = previous last_slot, "" if there was none: then slot - 1, which
--           still lets this slot fire, unlike deleting the key (with
--           catch_up off a missing last_slot would be re-primed to this very
--           slot instead)
-- ARGV[3] = jid the claim took the running lock under
--
-- Returns 1.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  if ARGV[2] == "" then
    redis.call("SET", KEYS[1], tostring(tonumber(ARGV[1]) - 1))
  else
    redis.call("SET", KEYS[1], ARGV[2])
  end
end
redis.call("DEL", KEYS[2])
-- Best-effort: an entry without until_executed has no lock, and one of the
-- wrong type must not make an applied rollback count as failed and be
-- retried forever.
if redis.pcall("GET", KEYS[3]) == ARGV[3] then
  redis.pcall("DEL", KEYS[3])
end
return 1
