--[[
batch_settle: records one job's outcome in its batch and fires the batch's
callbacks whose condition it is the first to meet, in one step
(docs/batches.md). Every change is keyed on set membership, so running it
twice for one outcome (a job re-run after its process died, a reply lost)
counts once; and the callback job is pushed in the same call that claims
its marker, so each event fires exactly once however many processes race
on a batch's last jobs, and a crash can neither lose nor repeat it.

KEYS[1]  b-<bid>            KEYS[2]  b-<bid>-jids      KEYS[3]  b-<bid>-failed
KEYS[4]  b-<bid>-died       KEYS[5]  b-<bid>-failinfo  KEYS[6]  b-<bid>-complete
KEYS[7]  b-<bid>-success    KEYS[8]  b-<bid>-death     KEYS[9]  queues
ARGV[1]  outcome: "success", "failure" (it will be retried), "death" (it
         went to dead or was discarded), or "close" (the batch's jobs are
         all added: ARGV[2] is then the hold member)
ARGV[2]  jid
ARGV[3]  failure info, JSON text ("" for success and close)
ARGV[4]  expiry in seconds of an unfinished batch's keys (30 days)
ARGV[5]  now, float epoch seconds as text (callback created_at/enqueued_at)
ARGV[6]  22 hex characters: a callback job's jid is these and two more
ARGV[7]  the bid
ARGV[8]  seconds the keys live on after the batch succeeded (24 h)

Returns {fired, pending, failures, live, died}: fired is the events this
call fired, comma-separated in firing order ("" for none, "missing" when the
batch does not exist: a straggler of an expired or deleted batch fires
nothing); live counts the jids still to succeed or die (the hold member
included while the batch is open).

Events (Sidekiq Pro's): `complete` when every job has run at least once
(every live jid is failing, awaiting a retry), `success` when every job has
succeeded, `death` the first time a job of the batch dies. `complete` fires
before `success` when both become true in one call.
]]
if redis.call("EXISTS", KEYS[1]) == 0 then
  return { "missing", 0, 0, 0, 0 }
end
local outcome, jid = ARGV[1], ARGV[2]

local function clear_failing()
  if redis.call("SREM", KEYS[3], jid) == 1 then
    redis.call("HINCRBY", KEYS[1], "failures", -1)
  end
end

if outcome == "success" then
  clear_failing()
  redis.call("HDEL", KEYS[5], jid)
  if redis.call("SREM", KEYS[2], jid) == 1 then
    redis.call("HINCRBY", KEYS[1], "pending", -1)
  elseif redis.call("SREM", KEYS[4], jid) == 1 then
    -- A dead job retried by hand that now succeeded: a death never counted
    -- pending down, so its success does; the batch is no longer dead.
    redis.call("HINCRBY", KEYS[1], "pending", -1)
  end
elseif outcome == "failure" then
  -- Only a live job can be failing: a late report for a job that already
  -- succeeded or died must not make the batch look failing again.
  if redis.call("SISMEMBER", KEYS[2], jid) == 1 then
    if redis.call("SADD", KEYS[3], jid) == 1 then
      redis.call("HINCRBY", KEYS[1], "failures", 1)
    end
    redis.call("HSET", KEYS[5], jid, ARGV[3])
  end
elseif outcome == "death" then
  if redis.call("SREM", KEYS[2], jid) == 1 then
    clear_failing()
    redis.call("SADD", KEYS[4], jid)
    redis.call("HSET", KEYS[5], jid, ARGV[3])
  end
elseif outcome == "close" then
  redis.call("SREM", KEYS[2], jid)
else
  return redis.error_reply("batch_settle: unknown outcome " .. tostring(outcome))
end

local live = redis.call("SCARD", KEYS[2])
local failing = redis.call("SCARD", KEYS[3])
local died = redis.call("SCARD", KEYS[4])
local pending = tonumber(redis.call("HGET", KEYS[1], "pending")) or 0
local failures = tonumber(redis.call("HGET", KEYS[1], "failures")) or 0
local queue = redis.call("HGET", KEYS[1], "callback_queue")
if not queue or queue == "" then
  queue = "default"
end
local callbacks = {}
local stored = redis.call("HGET", KEYS[1], "callbacks")
if stored and stored ~= "" then
  callbacks = cjson.decode(stored)
end

local pushed = 0
-- Each callback job is Wurk's: Wurk::Batch::CallbackJob with args
-- [bid, target, event, options], run by whichever process (Ruby or wurk)
-- knows the target class.
local function push_callbacks(event)
  for _, entry in ipairs(callbacks) do
    if entry[1] == event then
      pushed = pushed + 1
      local options = entry[3]
      if type(options) ~= "table" then
        options = {}
      end
      local options_json = cjson.encode(options)
      local payload = '{"class":"Wurk::Batch::CallbackJob","queue":' .. cjson.encode(queue)
        .. ',"args":[' .. cjson.encode(ARGV[7]) .. ',' .. cjson.encode(entry[2]) .. ',' .. cjson.encode(event)
        .. ',' .. options_json .. '],"retry":true,"jid":"' .. ARGV[6] .. string.format("%02x", pushed % 256)
        .. '","created_at":' .. ARGV[5] .. ',"enqueued_at":' .. ARGV[5] .. '}'
      redis.call("SADD", KEYS[9], queue)
      redis.call("LPUSH", "queue:" .. queue, payload)
    end
  end
end

local fired = {}
local function fire(event, marker, ttl)
  if redis.call("SET", marker, ARGV[5], "NX", "EX", ttl) then
    redis.call("HSET", KEYS[1], event .. "_at", ARGV[5])
    push_callbacks(event)
    fired[#fired + 1] = event
  end
end

local keep = tonumber(ARGV[4])
if died > 0 then
  fire("death", KEYS[8], keep)
end
-- live == failing: the hold member is gone (it is never failing) and every
-- job still live has run and failed at least once.
if live == failing then
  fire("complete", KEYS[6], keep)
end
if live == 0 and died == 0 and pending == 0 then
  fire("success", KEYS[7], keep)
end
-- Sidekiq Pro keeps a succeeded batch's data for a day; the markers keep
-- their own (longer) expiry so a straggler cannot fire twice meanwhile.
if #fired > 0 and fired[#fired] == "success" then
  for i = 1, 5 do
    redis.call("EXPIRE", KEYS[i], ARGV[8])
  end
end
return { table.concat(fired, ","), pending, failures, live, died }
