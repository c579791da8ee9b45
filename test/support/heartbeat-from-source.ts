import { join } from 'node:path';
import { preloadInSourceThreads } from '../../src/server/heartbeat/heartbeat';

/**
 * Jest setup (jest.config.js `setupFiles`): ts-jest compiles the source in
 * Jest's own module registry, which a worker thread does not share, so a
 * thread started from src/ (the heartbeat's, a sandbox's) registers a
 * TypeScript loader first: ts-loader.js, which keeps what it
 * transpiled on disk.
 */
preloadInSourceThreads(join(__dirname, 'ts-loader.js'));
