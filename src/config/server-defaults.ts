import type { QueueSpec } from '../job/queue-name';

/**
 * The defaults of the processing options (concurrency, queues, fetch, timeouts, intervals), as `WurkModule.forRoot`
 * fills them in.
 */
export const SERVER_DEFAULTS = {
  concurrency: 10,
  queues: ['default'] as QueueSpec,
  fetch: 'reliable' as const,
  shutdownTimeout: 25,
  fetchTimeout: 2,
  prefetch: 10,
  pollInterval: 5,
  heartbeatInterval: 10,
  heartbeatTtl: 60,
  orphanThreshold: 60,
  orphanCheckInterval: 60,
  maxOrphanings: 3,
  maxRetries: 25,
  overLimitRetries: 20,
  deadMaxJobs: 10000,
  deadTimeout: 15552000,
  executionMetrics: true,
};
