-- Files a fetched payload whose bytes are not valid UTF-8 in dead, wrapped
-- as Wurk::InvalidPayload with the bytes kept base64-encoded, and takes it
-- out of the list it was fetched into, in one step. Used where a payload
-- reached the caller before any script could look at it (BLMOVE, BRPOP):
-- the caller passes the bytes as they are (a Buffer), never decoded.
--
-- KEYS[1] = the list it sits in (a claimed list; ignored unless ARGV[7] is
-- "L"), KEYS[2] = dead.
-- ARGV[1] = the payload bytes, ARGV[2] = queue name, ARGV[3] = dead trim:
-- drop entries scored below this, ARGV[4] = keep at most this many dead
-- entries, ARGV[5] = now (float seconds, the score), ARGV[6] = now as a
-- payload timestamp (failed_at), ARGV[7] = "L" to take it from KEYS[1]
-- first ("" for basic fetch, where it is in no list).
--
-- Returns 1 when filed, 0 when it was no longer in KEYS[1].

-- #include invalid_payload

if ARGV[7] == "L" and redis.call("LPOS", KEYS[1], ARGV[1]) == false then
  return 0
end
bury_invalid(KEYS[2], ARGV[1], ARGV[2], "not valid UTF-8", ARGV[6], ARGV[5], ARGV[3], ARGV[4])
if ARGV[7] == "L" then
  redis.call("LREM", KEYS[1], 1, ARGV[1])
end
return 1
