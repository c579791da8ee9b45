import { RedisServer, RedisServerOptions } from './redis-server';

const started: RedisServer[] = [];

// Registered at the root of the test file that imports this module, so it
// runs after every describe block's own afterAll: apps close while their
// Redis is still up.
afterAll(async () => {
  await Promise.all(started.splice(0).map((server) => server.stop()));
});

/**
 * A private redis-server for the enclosing describe block: booted before its
 * tests, stopped when the file is done, and emptied before each test when asked.
 */
export function usePrivateRedis(options: RedisServerOptions & { flushBeforeEach?: boolean } = {}): RedisServer {
  const server = new RedisServer(options);
  started.push(server);
  beforeAll(() => server.boot());
  if (options.flushBeforeEach) beforeEach(() => server.redis.flushall());
  return server;
}
