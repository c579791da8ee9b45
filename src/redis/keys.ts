/**
 * Every Redis key wurk reads or writes, built in one place.
 *
 * There is no key prefix and no namespace: Sidekiq has none, and the drop-in
 * guarantee means a Ruby process and a wurk process must name the same key
 * the same way. For the same reason Redis Cluster is not supported: Sidekiq's
 * multi-key scripts and pipelines assume one keyspace.
 *
 * Sidekiq's own keys come first (docs/internals/spec/sidekiq-wire.md §1–5), then the keys of
 * wurk's extras, named as the Ruby gems Wurk and Cogworker name them
 * (spec/contract.md) so a mixed fleet shares them.
 */
export const Keys = {
  // --- Sidekiq: queues and sorted sets -------------------------------------
  /** SET of every queue name ever pushed to; Web UI and Stats only see queues listed here. */
  queues: 'queues',
  queuePrefix: 'queue:',
  /**
   * LIST of the jobs waiting in queue `name`: pushed on the left (LPUSH), fetched from the right, as Sidekiq does. The
   * name is not encoded.
   */
  queue: (name: string): string => `queue:${name}`,
  schedule: 'schedule',
  retry: 'retry',
  dead: 'dead',
  /** Sidekiq Pro's paused-queue SET; the OSS API reads it, reliable fetch honours it. */
  paused: 'paused',

  // --- Sidekiq: process registry and stats ---------------------------------
  processes: 'processes',
  /**
   * HASH of one process's heartbeat (`info`, `busy`, `beat`, `quiet`, `rss`, …), named by the identity alone and
   * expiring `heartbeatTtl` (60 s by default) after its last beat.
   */
  process: (identity: string): string => identity,
  /** In-flight work hash as Sidekiq 7/8 read it. */
  work: (identity: string): string => `${identity}:work`,
  /** In-flight work hash as Sidekiq 6.x reads it. */
  workLegacy: (identity: string): string => `${identity}:workers`,
  /**
   * LIST of remote signals (TSTP, TERM, …) for one process, popped at its beats; written by the Web UI and ProcessSet
   * with a 60 s TTL.
   */
  signals: (identity: string): string => `${identity}-signals`,
  processCleanup: 'process_cleanup',
  statProcessed: 'stat:processed',
  statFailed: 'stat:failed',
  /** Jobs dropped unrun because their `expiry` or `deadline` passed (Sidekiq Pro's and Wurk's counter). */
  statExpired: 'stat:expired',
  /** `date` is the UTC day as YYYY-MM-DD. */
  statProcessedOn: (date: string): string => `stat:processed:${date}`,
  /** Failures on one UTC day (`date` as YYYY-MM-DD), a counter kept five years as Sidekiq keeps it. */
  statFailedOn: (date: string): string => `stat:failed:${date}`,
  /** Expired drops on one UTC day (`date` as YYYY-MM-DD), kept as long as the other day counters. */
  statExpiredOn: (date: string): string => `stat:expired:${date}`,

  // --- Sidekiq 7+: execution metrics (lib/sidekiq/metrics/) ----------------
  // 7.3 and 8.1 name the same buckets differently; wurk writes both so either
  // Web UI's Metrics page shows its jobs. All times UTC, from epoch ms.
  /** 7.x per-minute HASH of `Class|p`, `Class|f`, `Class|ms`: `j|20261130|9:5`. */
  metricsMinuteV7: (epochMs: number): string => {
    const t = utcParts(epochMs);
    return `j|${t.year}${t.month}${t.day}|${t.hour}:${t.minute}`;
  },
  /** 8.x per-minute HASH, same fields: `j|261130|9:05`. */
  metricsMinuteV8: (epochMs: number): string => {
    const t = utcParts(epochMs);
    return `j|${t.year.slice(2)}${t.month}${t.day}|${t.hour}:${pad2(t.minute)}`;
  },
  /** 8.x ten-minute rollup HASH read by `top_jobs(hours:)`: `j|261130|9:0` for 09:00–09:09. */
  metricsTenMinutesV8: (epochMs: number): string => {
    const t = utcParts(epochMs);
    return `j|${t.year.slice(2)}${t.month}${t.day}|${t.hour}:${pad2(t.minute)[0]}`;
  },
  /** 7.x per-class, per-minute BITFIELD of u16 bucket counters: `Class-30-09:5`. */
  metricsHistogramV7: (className: string, epochMs: number): string => {
    const t = utcParts(epochMs);
    return `${className}-${t.day}-${pad2(t.hour)}:${t.minute}`;
  },
  /** 8.x histogram: `h|Class-30-9:5`. */
  metricsHistogramV8: (className: string, epochMs: number): string => {
    const t = utcParts(epochMs);
    return `h|${className}-${Number(t.day)}-${t.hour}:${t.minute}`;
  },

  // --- Reliable fetch (docs/internals/spec/contract.md §3.1, shared with Ruby Wurk) ---------------
  /** Private in-progress list of one process for one public queue: jobs whose `perform` started, until acknowledged. */
  privateQueue: (queue: string, host: string, pid: number, nonce: string): string =>
    `queue:${queue}|${host}|${pid}|${nonce}|0`,
  /**
   * Jobs one process claimed from one public queue but has not started
   * (prefetched). Index 1 beside the in-progress list's 0, so Ruby Wurk's
   * reaper, which takes any index, still recovers it in a mixed fleet.
   */
  claimedQueue: (queue: string, host: string, pid: number, nonce: string): string =>
    `queue:${queue}|${host}|${pid}|${nonce}|1`,
  /** Per-jid count of orphan recoveries (poison-pill guard). */
  recovered: (jid: string): string => `super_fetch:recovered:${jid}`,
  reaperLock: 'super_fetch:reaper',
  /** HASH identity → float epoch seconds of its last beat, kept past the 60 s heartbeat hash for orphan checks. */
  lastBeat: 'wurk:last_beat',
  reaperFullLock: 'super_fetch:reaper:full',
  /** LIST of payloads recovered more than `maxOrphanings` times, parked by the requeue script until filed in `dead`. */
  repeatOrphans: 'wurk:repeat_orphans',
  /**
   * SET of payloads recovered from a dead process after their `perform`
   * started there: each may be what killed it, so each runs alone.
   */
  suspects: 'wurk:suspects',
  /**
   * LIST of JSON `{set, score, payload}`: failures a stopping process could not file, filed later by any live process.
   */
  unsettled: 'wurk:unsettled',
  /**
   * STRING set in the same MULTI as a write that waits for a replica, with a TTL a little past the write's deadline: a
   * re-send after a master switch finds it where the first copy landed and sends nothing (src/redis/marked-write.ts).
   */
  writeMarker: (id: string): string => `wurk:written:${id}`,

  // --- Job status (docs/internals/spec/contract.md §2) --------------------------------------------
  /**
   * HASH of one tracked job's status row (Wurk's fields and states, docs/internals/spec/contract.md §2), with the TTL
   * of the status options.
   */
  status: (jid: string): string => `status:${jid}`,

  // --- Iterable jobs (Sidekiq 7.3's Sidekiq::IterableJob; docs/iterable-jobs.md) -----------------
  /**
   * HASH of one iterable job's progress: `ex` (executions), `c` (the cursor, JSON), `rt` (seconds run so far) and
   * `cancelled` (epoch seconds, set once by a cancel); 30 days TTL, deleted when the iteration completes.
   */
  iteration: (jid: string): string => `it-${jid}`,

  // --- Batches (Sidekiq Pro's / Wurk's layout; docs/batches.md) -----------------------------------
  /**
   * HASH of one batch: `created_at`, `description`, `callback_queue`, `callback_class`, `callbacks` (JSON), `total`,
   * `pending`, `failures`, and `complete_at` / `success_at` / `death_at` (with `complete` / `success` / `death` = 1)
   * once each fired; a child's `parent_bid`; `invalidated` = 1 once invalidated. lua/batch_settle.lua builds these
   * names of a parent batch itself (`b-<bid>`, `b-<bid>-jids`, …), as they are built here.
   */
  batch: (bid: string): string => `b-${bid}`,
  /** SET of a batch's jids that have not yet succeeded or died (and the open batch's hold member). */
  batchJids: (bid: string): string => `b-${bid}-jids`,
  /** SET of a batch's jids currently failing (awaiting a retry); its size is the hash's `failures`. */
  batchFailed: (bid: string): string => `b-${bid}-failed`,
  /** SET of a batch's jids that died (went to the dead set). */
  batchDied: (bid: string): string => `b-${bid}-died`,
  /** HASH of jid to the JSON `{"error_class", "error_message"}` of its last failure. */
  batchFailInfo: (bid: string): string => `b-${bid}-failinfo`,
  /** STRING marker set (NX, with the batch's expiry) when `event` fired, so it fires once across processes. */
  batchFired: (bid: string, event: 'complete' | 'success' | 'death'): string => `b-${bid}-${event}`,
  /** SET of every child batch's bid (a child's hash names this batch in `parent_bid`). */
  batchKids: (bid: string): string => `b-${bid}-kids`,
  /** SET of the child batches not yet finished (a child leaves it once none of its jobs and children is left). */
  batchPendingKids: (bid: string): string => `b-${bid}-pkids`,
  /** ZSET of bids scored by creation time (float epoch seconds). */
  batches: 'batches',

  // --- Batch indexes an operator lists by, and what a delete removes (docs/batches.md) -------------
  /** ZSET of the bids of batches that had a death (Ruby Wurk's and Sidekiq Pro's `Batch::DeadSet`); wurk cleans it. */
  deadBatches: 'dead-batches',
  /**
   * The reverse index of one batch tag (Sidekiq Pro 8.1's `tags`, `BatchSet#scan_tags`): a SET of bids as Ruby Wurk
   * writes it (a HASH or ZSET keyed by bid is read too).
   */
  batchTag: (tag: string): string => `tags:${tag}`,
  /**
   * Every key of one batch besides its hash, as Sidekiq Pro's and Ruby Wurk's `Status#delete` know them, `-tags` (a
   * SET of its tags in Pro's key list) first: the sets wurk writes, the fired markers, and Pro's / Ruby Wurk's
   * `-notify`, `-cbsucc`, `-kids` and `-pkids`.
   */
  batchKeys: (bid: string): string[] =>
    [
      'tags',
      'jids',
      'failed',
      'died',
      'failinfo',
      'complete',
      'success',
      'death',
      'notify',
      'cbsucc',
      'kids',
      'pkids',
    ].map((suffix) => `b-${bid}-${suffix}`),

  // --- Flows (Ruby Wurk's layout: lib/wurk/keys.rb; docs/flows.md) --------------------------------
  /**
   * HASH of one flow: `created_at`, `state` (running, succeeded, failed, abandoned), `total`, `pending` (nodes not yet
   * settled), `depth`, `width`, `expiry`, and `finished_at` / `failed_at` once reached. A fid never holds a colon, so
   * the node and dead keys below cannot collide with another flow's.
   */
  flow: (fid: string): string => `flow:${fid}`,
  /** HASH of one node of a flow, by its 0-based declaration index: its job, batch, edges and state. */
  flowNode: (fid: string, index: number): string => `flow:${fid}:${index}`,
  /** SET of the indexes of the nodes a flow is failed because of (their job is dead). */
  flowDead: (fid: string): string => `flow:${fid}:dead`,
  /** ZSET of fids scored by creation time (float epoch seconds). */
  flows: 'flows',

  // --- Job history (the attempts log of seed 004, docs/seed-rules.md; docs/job-history.md) ----------
  /** LIST of JSON attempt records, oldest first, bounded and with a TTL; written only when an attempt fails. */
  attempts: (jid: string): string => `attempts:${jid}`,

  // --- Periodic jobs (docs/internals/spec/contract.md §4.1) ---------------------------------------
  /**
   * The newest slot (integer epoch seconds) claimed for periodic entry `pjid`; a slot not newer is never pushed again.
   */
  periodicLastSlot: (pjid: string): string => `periodic:last_slot:${pjid}`,
  /** Per-slot NX lock (20 s TTL) that lets one process among many push a periodic entry's `slot`. */
  periodicSlotLock: (pjid: string, slot: number): string => `periodic:lock:${pjid}:${slot}`,
  /**
   * Running lock of an `until_executed` periodic entry: holds the owning jid, so no slot fires while that run is queued
   * or running.
   */
  periodicRunning: (pjid: string): string => `periodic:running:${pjid}`,
  periodicDisabled: 'periodic:disabled',
  periodicSchedule: 'periodic:schedule',

  // --- Unique jobs (docs/internals/spec/contract.md §5, Wurk's layout) ----------------------------
  /** `digest` = hex SHA-256 of Ruby's `JSON.generate([class, queue, args])`; value = the holder's jid. */
  unique: (digest: string): string => `unique:${digest}`,
  // --- Collapse policies (Ruby Wurk's `collapse:` option; the digest is the unique-job digest above) ---
  /** HASH of a debounce burst: `member` = the pending job as it sits in `schedule`, `first` = the burst's start. */
  debounce: (digest: string): string => `debounce:${digest}`,
  /** Prefix of a throttle's slot keys `throttle:<digest>:<floor(epoch / slot)>`, each holding the admitted jid. */
  throttle: (digest: string): string => `throttle:${digest}`,
  /**
   * A set or queue being cleared by the admin API, held (renamed) here while its jobs' unique locks are given back;
   * `token` is the clear's own.
   */
  clearing: (source: string, token: string): string => `wurk:clearing:${source}:${token}`,

  // --- HTTP produce plane (docs/internals/spec/contract.md §1.8, §1.9) ----------------------------
  /** `digest` = hex SHA-256 of "<principal>\n<route>\n<key>": the client's string never reaches Redis. */
  idempotency: (digest: string): string => `idempotency:${digest}`,
  // --- Limiters (Sidekiq Enterprise's shapes) -------------------------------
  /** ZSET of the holders of a concurrent limiter's slots, scored by when each lapses. */
  limiterConcurrent: (name: string): string => `lmtr-c:${name}`,
  /**
   * ZSET of a window limiter's admissions in its current window; the HTTP API's per-token limit is
   * `api-token:<principal>`.
   */
  limiterWindow: (name: string): string => `lmtr-w:${name}`,
  /** STRING counter of a bucket limiter for one interval; `epoch` = whole intervals since the Unix epoch. */
  limiterBucket: (name: string, epoch: number): string => `lmtr-b:${name}:${epoch}`,
  /** HASH `level`, `last` (epoch seconds) of a leaky bucket limiter. */
  limiterLeaky: (name: string): string => `lmtr-l:${name}`,
  /** HASH `points` (left), `last` (epoch seconds) of a points limiter. */
  limiterPoints: (name: string): string => `lmtr-p:${name}`,
  /** HASH of a registered limiter: `type`, `options` (JSON), `fingerprint`, `last_used`; expires after its `ttl`. */
  limiterMeta: (name: string): string => `lmtr:${name}`,
  /** SET of every registered limiter's name (Sidekiq Enterprise's / Wurk's limiter registry). */
  limiterList: 'lmtr-list',
} as const;

function pad2(value: number | string): string {
  return String(value).padStart(2, '0');
}

/** Year, zero-padded month and day, unpadded hour and minute: the strftime pieces the metric keys combine. */
function utcParts(epochMs: number): { year: string; month: string; day: string; hour: number; minute: number } {
  const date = new Date(epochMs);
  return {
    year: String(date.getUTCFullYear()),
    month: pad2(date.getUTCMonth() + 1),
    day: pad2(date.getUTCDate()),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
  };
}

/** The UTC calendar day Sidekiq uses for its per-day stat keys. */
export function utcDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}
