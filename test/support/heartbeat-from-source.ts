import { join } from 'node:path';
import { preloadInSourceThreads } from '../../src/server/heartbeat/heartbeat';

/**
 * Jest setup (jest.config.js `setupFiles`): ts-jest compiles the source in
 * Jest's own module registry, which a worker thread does not share, so a
 * heartbeat thread started from src/ registers ts-node first.
 */
preloadInSourceThreads(join(__dirname, 'ts-node-thread.js'));
