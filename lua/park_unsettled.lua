-- Basic fetch at shutdown: parks the failures this process could not file
-- (their jobs exist nowhere but in these records: a BRPOPed job lives only
-- in memory) where any live process files them, in one atomic step.
--
-- KEYS[1] = wurk:unsettled, KEYS[2] = retry, KEYS[3] = dead.
-- ARGV = the JSON records {set, score, payload}, one each.
--
-- Returns the records nothing could take (their payloads are then only in
-- the caller's hands, which logs them whole): a bare RPUSH that failed (a
-- key of the wrong type) lost them all.
-- #include park_record

local lost = {}
for i = 1, #ARGV do
  if not park_record(KEYS[1], KEYS[2], KEYS[3], ARGV[i]) then lost[#lost + 1] = ARGV[i] end
end
return lost
