-- Deletes a unique lock only while `jid` still holds it (unique_release.lua's
-- rule): a lock that expired and was taken by a newer push stays that push's.
local function release_held_lock(key, jid)
  if redis.call("GET", key) == jid then
    redis.call("DEL", key)
  end
end
