/**
 * `nestjs-wurk/testing`: a separate entry, so nothing here loads (or turns
 * on) unless a test imports it.
 */
export { WurkTestingModule, WurkTesting } from '../nest/wurk-testing.module';
export type { WurkTestingOptions } from '../nest/wurk-testing.module';
export { TestingServer } from '../nest/testing-server';
export type { DrainReport, EnqueuedJob, TestMode } from '../testing/testing-transport';
export { TestingTransport } from '../testing/testing-transport';
export { MemoryStatusRows } from '../testing/memory-status';
export { JobRunner } from '../testing/job-runner';
export type { JobRunnerDeps } from '../testing/job-runner';
export {
  EmptyQueueError,
  EnqueuedAssertionError,
  RunawayJobsError,
  TestingNeedsRedisError,
  TestModeAlreadySetError,
} from '../testing/errors';
export { redisStandIn, TestingConnections } from '../testing/redis-stand-in';
