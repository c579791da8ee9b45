-- settle_batch(ctx, own, bid, outcome, given, failure): the batch rules
-- (docs/batches.md), shared by lua/batch_settle.lua (one outcome, from any
-- caller) and lua/fetch.lua (the successes of jobs whose acknowledgment it
-- carries, counted in the same step), so callbacks, cascades and the
-- dead-batch index exist once. lua/batch_settle.lua's header describes
-- what it does and what it returns.
--
-- ctx: { expiry (seconds an unfinished batch's keys live, also the window
-- of `dead-batches`), now (float epoch seconds as text), prefix (20 hex:
-- a callback job's jid is these and four more), linger (seconds a
-- succeeded batch's keys live on), queues and dead_batches (key names),
-- pushed (callbacks pushed so far by this call: numbers the callback jids
-- across every batch one call settles) }.
-- own: the batch's keys, as batch_keys(bid) names them.
-- given: the jids (success, remove: all of them; else only the first).
-- #include index_trim

-- The keys of batch `of`, named as src/redis/keys.ts names them.
local function batch_keys(of)
  local base = "b-" .. of
  return {
    batch = base, jids = base .. "-jids", failed = base .. "-failed", died = base .. "-died",
    failinfo = base .. "-failinfo", complete = base .. "-complete", success = base .. "-success",
    death = base .. "-death", kids = base .. "-kids", pkids = base .. "-pkids",
  }
end

local function settle_batch(ctx, own, bid, outcome, given, failure)
  if redis.call("EXISTS", own.batch) == 0 then
    return { "missing", 0, 0, 0, 0, 0, "", 0 }
  end
  local jid = given[1]
  local expiry, now = ctx.expiry, ctx.now
  local dead_batches = ctx.dead_batches
  -- A chain deeper than this (or a parent_bid cycle a hand-written hash could
  -- make) is not followed further.
  local MAX_DEPTH = 64

  -- Lists the batch in `dead-batches`, scored now; with how = "NX" a batch
  -- listed already keeps its time.
  local function list_dead(of, how)
    if how == "NX" then
      redis.call("ZADD", dead_batches, "NX", now, of)
    else
      redis.call("ZADD", dead_batches, now, of)
    end
    trim_index(dead_batches, now, expiry)
  end

  -- Lifts a batch's death mark, and takes it out of `dead-batches` with it.
  local function lift_death(batch_key, of)
    redis.call("HDEL", batch_key, "death")
    redis.call("ZREM", dead_batches, of)
  end

  -- TTL == -1 (no expiry) rather than EXPIRE NX, which Redis 6.2 lacks.
  local function stamp(key)
    if redis.call("TTL", key) == -1 then
      redis.call("EXPIRE", key, expiry)
    end
  end

  local function clear_failing(member)
    if redis.call("SREM", own.failed, member) == 1 then
      redis.call("HINCRBY", own.batch, "failures", -1)
    end
  end

  -- True when a child of the batch carries a death (its own, or one a
  -- descendant's death marked it with): the batch cannot succeed meanwhile.
  local function kid_dead(k)
    for _, kid in ipairs(redis.call("SMEMBERS", k.kids)) do
      if redis.call("HGET", "b-" .. kid, "death") == "1" then
        return true
      end
    end
    return false
  end

  local changed = 0
  local died_now, revived = false, false
  -- What the success path learned of the batch's own counts, so the weighing
  -- below need not read them again (each redis.call costs about as much as the
  -- command it runs): failing and died (SCARDs), pending (the hash field).
  local known = {}
  if outcome == "success" then
    -- The hot path: one call for every job of the batch that finished while
    -- the previous call was on its way, in as few commands as the jids allow.
    local failing = redis.call("SCARD", own.failed)
    local died = redis.call("SCARD", own.died)
    if failing == 0 and died == 0 then
      -- Nothing failing, nothing dead (the common case): no jid has a failure
      -- to forget (failinfo holds only failing and dead jids) or a death to
      -- lift, so the live jids leave in one SREM and that is all.
      changed = redis.call("SREM", own.jids, unpack(given))
    else
      -- A jid that was failing stops failing; its last failure is forgotten.
      local cleared = redis.call("SREM", own.failed, unpack(given))
      if cleared > 0 then
        redis.call("HINCRBY", own.batch, "failures", -cleared)
        failing = failing - cleared
      end
      redis.call("HDEL", own.failinfo, unpack(given))
      -- The live jids leave in one SREM; only a jid that was not live is
      -- looked for among the dead.
      local is_live = redis.call("SMISMEMBER", own.jids, unpack(given))
      local live, others = {}, {}
      for i, member in ipairs(given) do
        if is_live[i] == 1 then
          live[#live + 1] = member
        else
          others[#others + 1] = member
        end
      end
      if #live > 0 then
        changed = redis.call("SREM", own.jids, unpack(live))
      end
      for _, member in ipairs(others) do
        if redis.call("SREM", own.died, member) == 1 then
          -- A dead job retried by hand that now succeeded: a death never
          -- counted pending down, so its success does; the batch is no longer
          -- dead.
          changed, revived, died = changed + 1, true, died - 1
        end
      end
    end
    known.failing, known.died = failing, died
    if changed > 0 then
      known.pending = redis.call("HINCRBY", own.batch, "pending", -changed)
    end
  elseif outcome == "failure" then
    -- Only a live job can be failing: a late report for a job that already
    -- succeeded or died must not make the batch look failing again.
    if redis.call("SISMEMBER", own.jids, jid) == 1 then
      if redis.call("SADD", own.failed, jid) == 1 then
        redis.call("HINCRBY", own.batch, "failures", 1)
        changed = 1
      end
      redis.call("HSET", own.failinfo, jid, failure)
      stamp(own.failed)
      stamp(own.failinfo)
    end
  elseif outcome == "death" then
    if redis.call("SREM", own.jids, jid) == 1 then
      clear_failing(jid)
      redis.call("SADD", own.died, jid)
      redis.call("HSET", own.failinfo, jid, failure)
      redis.call("HSET", own.batch, "death", "1")
      if redis.call("SCARD", own.died) == 1 then
        list_dead(bid, "")
      end
      stamp(own.died)
      stamp(own.failinfo)
      changed, died_now = 1, true
    end
  elseif outcome == "close" then
    changed = redis.call("SREM", own.jids, jid)
  elseif outcome == "remove" then
    for _, member in ipairs(given) do
      if redis.call("SREM", own.jids, member) == 1 then
        clear_failing(member)
        redis.call("HDEL", own.failinfo, member)
        changed = changed + 1
      end
    end
    if changed > 0 then
      redis.call("HINCRBY", own.batch, "total", -changed)
      redis.call("HINCRBY", own.batch, "pending", -changed)
    end
  else
    return nil, "batch_settle: unknown outcome " .. tostring(outcome)
  end

  -- The batch's death mark goes once nothing under it is dead any more.
  if revived and redis.call("SCARD", own.died) == 0 and not kid_dead(own) then
    lift_death(own.batch, bid)
  end

  local cascaded = {}

  local function decoded(text)
    if not text or text == "" then
      return {}
    end
    local ok, value = pcall(cjson.decode, text)
    if ok and type(value) == "table" then
      return value
    end
    return {}
  end

  -- Each callback job is Wurk's: Wurk::Batch::CallbackJob with args
  -- [bid, target, event, options], run by whichever process (Ruby or wurk)
  -- knows the target class. A child's complete and success callbacks are jobs
  -- of its parent: counted into it before they are queued, as batch_add.lua
  -- counts a job.
  local function push_callbacks(k, of, event)
    local fields = redis.call("HMGET", k.batch, "callbacks", "callback_queue", "parent_bid")
    local queue = fields[2]
    if not queue or queue == "" then
      queue = "default"
    end
    local parent = fields[3]
    if event == "death" or not parent or parent == "" or parent == of or redis.call("EXISTS", "b-" .. parent) == 0 then
      parent = nil
    end
    for _, entry in ipairs(decoded(fields[1])) do
      if type(entry) == "table" and entry[1] == event then
        ctx.pushed = ctx.pushed + 1
        local options = entry[3]
        if type(options) ~= "table" then
          options = {}
        end
        local callback_jid = ctx.prefix .. string.format("%04x", ctx.pushed % 65536)
        local member = ""
        if parent then
          local pk = batch_keys(parent)
          if redis.call("SADD", pk.jids, callback_jid) == 1 then
            redis.call("HINCRBY", pk.batch, "total", 1)
            redis.call("HINCRBY", pk.batch, "pending", 1)
          end
          stamp(pk.jids)
          member = ',"bid":' .. cjson.encode(parent)
        end
        local payload = '{"class":"Wurk::Batch::CallbackJob","queue":' .. cjson.encode(queue)
          .. ',"args":[' .. cjson.encode(of) .. ',' .. cjson.encode(entry[2]) .. ',' .. cjson.encode(event)
          .. ',' .. cjson.encode(options) .. '],"retry":true' .. member .. ',"jid":"' .. callback_jid
          .. '","created_at":' .. now .. ',"enqueued_at":' .. now .. '}'
        redis.call("SADD", ctx.queues, queue)
        redis.call("LPUSH", "queue:" .. queue, payload)
      end
    end
  end

  local function fire(k, of, event, fired)
    if redis.call("SET", k[event], now, "NX", "EX", expiry) then
      redis.call("HSET", k.batch, event .. "_at", now, event, "1")
      push_callbacks(k, of, event)
      fired[#fired + 1] = event
      return true
    end
    return false
  end

  -- Marks every ancestor as carrying a death and fires its `death` (once: the
  -- marker decides), nearest first.
  local function death_up(of)
    local seen = { [of] = true }
    local parent = redis.call("HGET", "b-" .. of, "parent_bid")
    for _ = 1, MAX_DEPTH do
      if not parent or parent == "" or seen[parent] then
        return
      end
      seen[parent] = true
      local pk = batch_keys(parent)
      if redis.call("EXISTS", pk.batch) == 0 then
        return
      end
      redis.call("HSET", pk.batch, "death", "1")
      list_dead(parent, "NX")
      if fire(pk, parent, "death", {}) then
        cascaded[#cascaded + 1] = parent .. ":death"
      end
      parent = redis.call("HGET", pk.batch, "parent_bid")
    end
  end

  -- Fires what the batch's state now makes true; `after_death` runs between
  -- its death and its complete; `known` holds counts already read (failing,
  -- died, pending). Returns whether the batch has finished (no live job, hold
  -- included, and no unfinished child), then its live, died and pending
  -- counts, which firing does not change.
  local function evaluate(k, of, fired, after_death, counts)
    counts = counts or {}
    local live = redis.call("SCARD", k.jids)
    local failing = counts.failing or redis.call("SCARD", k.failed)
    local died = counts.died or redis.call("SCARD", k.died)
    local kids = redis.call("SCARD", k.pkids)
    local pending = counts.pending or tonumber(redis.call("HGET", k.batch, "pending")) or 0
    if died > 0 then
      fire(k, of, "death", fired)
    end
    if after_death then
      after_death()
    end
    -- live == failing: every hold is gone (a hold never fails) and every job
    -- still live has run and failed at least once.
    if kids == 0 and live == failing then
      fire(k, of, "complete", fired)
    end
    -- kid_dead reads every child: asked last, and only of a batch that has not succeeded yet.
    if kids == 0 and live == 0 and died == 0 and pending == 0 and redis.call("EXISTS", k.success) == 0
      and not kid_dead(k) then
      if fire(k, of, "success", fired) then
        -- Sidekiq Pro keeps a succeeded batch's data for a day; the markers
        -- keep their own (longer) expiry so a straggler cannot fire twice.
        for _, key in ipairs({ k.batch, k.jids, k.failed, k.died, k.failinfo, k.kids, k.pkids }) do
          redis.call("EXPIRE", key, ctx.linger)
        end
      end
    end
    return live == 0 and kids == 0, live, died, pending
  end

  local fired = {}
  local finished, live, died, pending = evaluate(own, bid, fired, died_now and function() death_up(bid) end or nil, known)

  -- A finished batch leaves its parent's unfinished children, and the parent
  -- is weighed again; so on up the chain while each one finishes.
  local k, of, seen = own, bid, { [bid] = true }
  for _ = 1, MAX_DEPTH do
    if not finished then
      break
    end
    local parent = redis.call("HGET", k.batch, "parent_bid")
    if not parent or parent == "" or seen[parent] then
      break
    end
    seen[parent] = true
    local pk = batch_keys(parent)
    if redis.call("EXISTS", pk.batch) == 0 then
      break
    end
    redis.call("SREM", pk.pkids, of)
    -- A child that recovered may have lifted the last death under the parent.
    if redis.call("HGET", pk.batch, "death") == "1" and redis.call("SCARD", pk.died) == 0 and not kid_dead(pk) then
      lift_death(pk.batch, parent)
    end
    local events = {}
    finished = evaluate(pk, parent, events, nil)
    for _, event in ipairs(events) do
      cascaded[#cascaded + 1] = parent .. ":" .. event
    end
    k, of = pk, parent
  end

  -- The reply's counts: those the weighing read, unless a cascade may have
  -- changed them since (a callback pushed into an ancestor that a
  -- hand-written parent_bid cycle makes this batch).
  if #cascaded > 0 then
    live, died = redis.call("SCARD", own.jids), redis.call("SCARD", own.died)
    pending = tonumber(redis.call("HGET", own.batch, "pending")) or 0
  end
  local tail = redis.call("HMGET", own.batch, "failures", "invalidated")
  return {
    table.concat(fired, ","),
    pending,
    tonumber(tail[1]) or 0,
    live,
    died,
    changed,
    table.concat(cascaded, ","),
    tail[2] == "1" and 1 or 0,
  }
end
