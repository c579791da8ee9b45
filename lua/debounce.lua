-- Debounce push of a collapse policy (Ruby Wurk's `debounce:<digest>` layout): the last push of a burst wins.
--
-- KEYS[1] = debounce:<digest>   HASH member (the pending job, exactly as it sits in `schedule`), first (burst start)
-- KEYS[2] = schedule
-- ARGV[1] = wait: seconds of quiet before the job runs
-- ARGV[2] = max_wait: cap on the run time, seconds after the burst's first push; 0 = none
-- ARGV[3] = the job as a `schedule` member (no `at`, no `enqueued_at`)
-- ARGV[4] = grace: seconds the hash outlives the member it records
--
-- Returns { replaced, score, first }: replaced = 1 when this push took the place of a still-pending member, 0 when it
-- opened a burst; score and first as "%.6f" epoch seconds.
--
-- One script: two producers reading "nothing pending" and each adding a member is the one outcome a collapse must
-- not have. The clock is Redis's, so producers with skewed clocks debounce against the same window.
local hash, schedule = KEYS[1], KEYS[2]
local wait, max_wait, member, grace = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])

local time = redis.call("TIME")
local now = tonumber(time[1]) + tonumber(time[2]) / 1000000

local replaced, first = 0, now
local previous = redis.call("HMGET", hash, "member", "first")
-- Removing the recorded member is also the test that the burst is still open: once the poller promoted it (or an
-- operator deleted, killed or ran it), it is gone, and this push opens a fresh burst with a fresh max_wait clock.
if previous[1] and redis.call("ZREM", schedule, previous[1]) == 1 then
  replaced = 1
  first = tonumber(previous[2]) or now
end

local at = now + wait
if max_wait > 0 and at > first + max_wait then
  at = first + max_wait
end

-- TIME has microseconds: six decimals keep the score exact and identical to what the caller is told.
local score = string.format("%.6f", at)
local started = string.format("%.6f", first)
redis.call("ZADD", schedule, score, member)
redis.call("HSET", hash, "member", member, "first", started)
-- The hash must outlive its member until the poller has promoted it, or the next push would add a second member.
redis.call("EXPIRE", hash, math.max(1, math.ceil(at - now + grace)))
return { replaced, score, started }
