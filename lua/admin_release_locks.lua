-- Gives back the unique locks of cleared jobs (after admin_detach.lua), each
-- only while the cleared job's jid still holds it.
--
-- KEYS[i] = a unique lock, ARGV[i] = the jid of the cleared job that named it.
--
-- Returns nothing.
-- #include release_held_lock
for i = 1, #KEYS do
  release_held_lock(KEYS[i], ARGV[i])
end
return 0
