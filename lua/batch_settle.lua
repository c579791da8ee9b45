--[[
batch_settle: records one job's outcome in its batch and fires the batch's
callbacks whose condition it is the first to meet, in one step
(docs/batches.md), then tells the batch's parent, grandparent… what that
changed for them. Every change is keyed on set membership, so running it
twice for one outcome (a job re-run after its process died, a reply lost)
counts once; and each callback job is pushed in the same call that claims
its marker, so each event fires exactly once however many processes race
on a batch's last jobs, and a crash can neither lose nor repeat it.

KEYS[1]  b-<bid>            KEYS[2]  b-<bid>-jids      KEYS[3]  b-<bid>-failed
KEYS[4]  b-<bid>-died       KEYS[5]  b-<bid>-failinfo  KEYS[6]  b-<bid>-complete
KEYS[7]  b-<bid>-success    KEYS[8]  b-<bid>-death     KEYS[9]  queues
KEYS[10] b-<bid>-kids       KEYS[11] b-<bid>-pkids     KEYS[12] dead-batches
ARGV[1]  outcome: "success" (of ARGV[2] and of every jid in ARGV[9..]:
         the successes of one batch that finished together, counted in one
         call), "failure" (it will be retried), "death" (it went to dead or
         was discarded), "close" (a `jobs` block of the batch returned:
         ARGV[2] is its hold member) or "remove" (the jids ARGV[2] and
         ARGV[9..] leave the batch uncounted: Ruby Wurk's remove_jobs)
ARGV[2]  jid
ARGV[3]  failure info, JSON text ("" for success, close and remove)
ARGV[4]  expiry in seconds of an unfinished batch's keys (30 days), also
         the window of `dead-batches` (lua/include/index_trim.lua)
ARGV[5]  now, float epoch seconds as text (callback created_at/enqueued_at)
ARGV[6]  20 hex characters: a callback job's jid is these and four more,
         counting the callbacks this call pushes
ARGV[7]  the bid
ARGV[8]  seconds the keys live on after the batch succeeded (24 h)
ARGV[9..] more jids (success, remove)

Returns {fired, pending, failures, live, died, changed, cascaded,
invalidated}: fired is
this batch's events this call fired, comma-separated in firing order ("" for
none, "missing" when the batch does not exist: a straggler of an expired or
deleted batch counts and fires nothing); live counts the jids still to
succeed or die (any hold of an open block included); changed is how many
jids the outcome moved (0 for a repeat); cascaded the events it fired in
ancestor batches, as "<bid>:<event>" comma-separated; invalidated is 1 when
the batch's hash says `invalidated` (the read a job of the batch makes before
it runs, answered in the same call), else 0.

Events (Sidekiq Pro's): `complete` when every job has run at least once
(every live jid is failing, awaiting a retry), `success` when every job has
succeeded, `death` the first time a job of the batch dies. `complete`
fires before `success` when both become true in one call.

Nesting (Ruby Wurk's layout): a child's hash names its parent in
`parent_bid`; the parent keeps every child in `-kids` and the unfinished
ones in `-pkids`. A batch with a child in `-pkids` fires neither `complete`
nor `success`; it succeeds only when no child carries a death (`death` = 1
on a child's hash, kept while a job of its subtree is dead). A child's
`complete` and `success` callback jobs join the parent (their payload
carries the parent's bid), so the parent finishes after them; its `death`
callbacks stay outside. A death marks and fires `death` up the chain. A
batch with no live job and no unfinished child has finished: it leaves its
parent's `-pkids`, and the parent is weighed again, in this same call. The
ancestors' key names are built in Lua as src/redis/keys.ts builds them.

Dead batches (Sidekiq Pro's Batch::DeadSet, Ruby Wurk's index_dead): a
batch is in `dead-batches` while its hash carries `death` = 1. It is added,
scored by the time, when its own first dead job makes its died set non-empty
(rescored then, as Ruby Wurk's ZADD does) or when a death under it first
marks it; it leaves when its mark is lifted (its dead jobs retried to
success, nothing dead under it). Each addition trims the set as Ruby Wurk
does (lua/include/index_trim.lua).

The rules themselves are lua/include/batch_rules.lua, which lua/fetch.lua
runs too: there a batch's successes are counted by the call that
acknowledges their jobs, in the same step.
]]
-- #include batch_rules
local given = { ARGV[2] }
for i = 9, #ARGV do
  given[#given + 1] = ARGV[i]
end
local own = {
  batch = KEYS[1], jids = KEYS[2], failed = KEYS[3], died = KEYS[4], failinfo = KEYS[5],
  complete = KEYS[6], success = KEYS[7], death = KEYS[8], kids = KEYS[10], pkids = KEYS[11],
}
local ctx = {
  expiry = ARGV[4], now = ARGV[5], prefix = ARGV[6], linger = ARGV[8],
  queues = KEYS[9], dead_batches = KEYS[12], pushed = 0,
}
local reply, err = settle_batch(ctx, own, ARGV[7], ARGV[1], given, ARGV[3])
if not reply then
  return redis.error_reply(err)
end
return reply
