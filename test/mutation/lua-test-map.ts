/**
 * The test files that pin each script's rules: the first tier a mutant of
 * that script runs against. Jest's dependency graph (every test that reaches
 * the TypeScript calling the script) names about 28 files for most scripts,
 * far too slow per mutant; these are the few that exercise the script's
 * branches directly. A mutant they let through is re-run against the whole
 * related set before it is called a survivor, so a gap here costs time,
 * never a wrong verdict.
 *
 * Paths are relative to the repository root. Order does not matter: the
 * runner orders them by measured duration, and any file that already killed a
 * mutant of the script goes first.
 */
export const CURATED_TESTS: Record<string, string[]> = {
  admin_kill: ['test/integration/lua-admin-scripts.test.ts', 'test/integration/admin-sets.test.ts'],
  admin_to_queue: ['test/integration/lua-admin-scripts.test.ts', 'test/integration/admin-sets.test.ts'],
  admin_remove: ['test/integration/lua-admin-scripts.test.ts', 'test/integration/admin-unique-locks.test.ts'],
  admin_detach: [
    'test/integration/lua-admin-scripts.test.ts',
    'test/integration/admin-unique-locks.test.ts',
    'test/integration/admin-sets.test.ts',
  ],
  admin_release_locks: ['test/integration/lua-admin-scripts.test.ts', 'test/integration/admin-unique-locks.test.ts'],
  batch_delete: [
    'test/integration/lua-batch-admin-scripts.test.ts',
    'test/integration/admin-batches.test.ts',
    'test/e2e/api-batch-admin.test.ts',
  ],
  batch_index_sweep: ['test/integration/lua-batch-admin-scripts.test.ts', 'test/integration/admin-batches.test.ts'],
  basic_fetch: [
    'test/integration/lua-fetch-scripts.test.ts',
    'test/integration/basic-fetch.test.ts',
    'test/integration/server-processing.test.ts',
    'test/integration/server-invalid-bytes.test.ts',
  ],
  bury_invalid: [
    'test/integration/lua-fetch-scripts.test.ts',
    'test/integration/fetch-filing.test.ts',
    'test/integration/server-invalid-bytes.test.ts',
  ],
  fetch: [
    'test/integration/lua-fetch-scripts.test.ts',
    'test/integration/lua-fetch-batch-groups.test.ts',
    'test/integration/batch-counted-acks.test.ts',
    'test/integration/reliable-fetch-claims.test.ts',
    'test/integration/reliable-fetch-acks.test.ts',
    'test/integration/server-processing.test.ts',
    'test/integration/server-prefetch.test.ts',
    'test/integration/server-orphans.test.ts',
    'test/integration/server-invalid-bytes.test.ts',
    'test/integration/server-suspect-blocking.test.ts',
    'test/integration/server-idle-fetch.test.ts',
    'test/integration/server-filing-order.test.ts',
    'test/integration/admin-pause.test.ts',
  ],
  give_back: [
    'test/integration/lua-fetch-scripts.test.ts',
    'test/integration/server-prefetch-fairness.test.ts',
    'test/integration/server-prefetch.test.ts',
    'test/integration/admin-pause.test.ts',
  ],
  hand_back_unstarted: [
    'test/integration/lua-fetch-scripts.test.ts',
    'test/integration/server-prefetch.test.ts',
    'test/integration/heartbeat-blocked-loop.test.ts',
  ],
  limiter_concurrent: ['test/integration/lua-limiter-scripts.test.ts', 'test/integration/limiters.test.ts'],
  limiter_bucket: ['test/integration/lua-limiter-kinds.test.ts', 'test/integration/limiter-kinds.test.ts'],
  limiter_leaky: ['test/integration/lua-limiter-kinds.test.ts', 'test/integration/limiter-kinds.test.ts'],
  limiter_points: ['test/integration/lua-limiter-kinds.test.ts', 'test/integration/limiter-kinds.test.ts'],
  limiter_register: ['test/integration/lua-limiter-kinds.test.ts', 'test/integration/limiter-kinds.test.ts'],
  limiter_registry_sweep: ['test/integration/lua-limiter-kinds.test.ts', 'test/integration/admin-limiters.test.ts'],
  periodic_claim: [
    'test/integration/lua-periodic-scripts.test.ts',
    'test/integration/periodic-seed-004.test.ts',
    'test/integration/periodic-exactly-once.test.ts',
    'test/integration/periodic-catch-up.test.ts',
    'test/integration/periodic-until-executed.test.ts',
    'test/integration/periodic-failures.test.ts',
  ],
  periodic_rollback: [
    'test/integration/lua-periodic-scripts.test.ts',
    'test/integration/periodic-seed-004.test.ts',
    'test/integration/periodic-failures.test.ts',
    'test/integration/periodic-catch-up.test.ts',
  ],
  periodic_running_lock: [
    'test/integration/lua-periodic-scripts.test.ts',
    'test/integration/periodic-until-executed.test.ts',
    'test/integration/periodic-seed-004.test.ts',
  ],
  park_unsettled: ['test/integration/basic-fetch.test.ts'],
  promote: ['test/integration/lua-poller-scripts.test.ts', 'test/integration/server-poller.test.ts'],
  rate_limit: [
    'test/integration/lua-limiter-scripts.test.ts',
    'test/integration/limiters.test.ts',
    'test/e2e/api-policies.test.ts',
  ],
  release: [
    'test/integration/lua-fetch-scripts.test.ts',
    'test/integration/server-filing-order.test.ts',
    'test/integration/server-prefetch.test.ts',
  ],
  requeue_orphans: [
    'test/integration/lua-orphan-scripts.test.ts',
    'test/integration/server-orphans.test.ts',
    'test/integration/periodic-until-executed.test.ts',
  ],
  settle: [
    'test/integration/lua-fetch-scripts.test.ts',
    'test/integration/server-retry.test.ts',
    'test/integration/server-settle-last-resort.test.ts',
    'test/integration/server-filing-order.test.ts',
  ],
  attempts_record: ['test/integration/job-history.test.ts'],
  status_write: ['test/integration/status-writer.test.ts', 'test/integration/status-e2e.test.ts'],
  unique_acquire: ['test/integration/unique-jobs.test.ts'],
  unique_release: ['test/integration/unique-jobs.test.ts'],
  flow_create: [
    'test/integration/lua-flow-scripts.test.ts',
    'test/integration/flow-processing.test.ts',
    'test/integration/flow-pipe-and-ttl.test.ts',
  ],
  flow_advance: [
    'test/integration/lua-flow-scripts.test.ts',
    'test/integration/flow-processing.test.ts',
    'test/integration/flow-pipe-and-ttl.test.ts',
  ],
  flow_fail: [
    'test/integration/lua-flow-scripts.test.ts',
    'test/integration/flow-processing.test.ts',
    'test/integration/flow-pipe-and-ttl.test.ts',
  ],
  flow_abandon: ['test/integration/lua-flow-scripts.test.ts', 'test/e2e/api-flows.test.ts'],
  batch_open: ['test/integration/lua-batch-scripts.test.ts', 'test/integration/batch-nesting.test.ts'],
  batch_add: ['test/integration/lua-batch-scripts.test.ts', 'test/integration/batch-processing.test.ts'],
  batch_settle: [
    'test/integration/lua-batch-scripts.test.ts',
    'test/integration/batch-processing.test.ts',
    'test/integration/batch-nesting.test.ts',
  ],
  // The rules batch_settle.lua and fetch.lua share.
  'include/batch_rules': [
    'test/integration/lua-batch-rules.test.ts',
    'test/integration/lua-batch-scripts.test.ts',
    'test/integration/lua-fetch-batch-groups.test.ts',
    'test/integration/batch-counted-acks.test.ts',
    'test/integration/batch-processing.test.ts',
    'test/integration/batch-nesting.test.ts',
  ],
  batch_invalidate: ['test/integration/lua-batch-scripts.test.ts', 'test/integration/batch-nesting.test.ts'],
};
