/**
 * `nestjs-wurk/testing`: a separate entry, so nothing here loads (or turns
 * on) unless a test imports it.
 */
export { WurkTestingModule, WurkTesting } from '../nest/wurk-testing.module';
export type { WurkTestingOptions } from '../nest/wurk-testing.module';
export { TestingServer } from '../nest/testing-server';
export type { DrainReport, EnqueuedJob, TestMode } from './testing-transport';
export { TestingTransport } from './testing-transport';
export { MemoryStatusRows } from './memory-status';
export { JobRunner } from './job-runner';
export type { JobRunnerDeps } from './job-runner';
export { EmptyQueueError, EnqueuedAssertionError, TestingNeedsRedisError, TestModeAlreadySetError } from './errors';
export { redisStandIn, TestingConnections } from './redis-stand-in';
