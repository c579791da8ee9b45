import { Client } from '../../src/client/client';
import { WorkerRegistry } from '../../src/job/worker-registry';
import { WorkerClass, WorkerInstance } from '../../src/job/worker-definition';
import { RedisConnections } from '../../src/redis/connections';
import { newProcessIdentity, ProcessIdentity } from '../../src/server/identity';
import { ExecutionCarrier } from '../../src/server/job-execution';
import { Manager } from '../../src/server/manager';
import { Poller } from '../../src/server/poller';
import type { ServerLogger } from '../../src/server/server-logger';
import { SERVER_DEFAULTS, ServerOptions } from '../../src/server/server-options';
import { FakeHeartbeat } from './fake-heartbeat';
import type { RedisServer } from './redis-server';

export const quietLogger: ServerLogger & { errors: string[] } = {
  errors: [],
  log: () => undefined,
  warn: () => undefined,
  error(message: string) {
    this.errors.push(message);
  },
};

export interface Harness {
  manager: Manager;
  heartbeat: FakeHeartbeat;
  connections: RedisConnections;
  client: Client;
  registry: WorkerRegistry;
  identity: ProcessIdentity;
  stop(): Promise<void>;
}

/** A Manager over a real Redis with a fake heartbeat, for tests of the process plane core. */
export function buildManager(
  url: string,
  workers: Array<{ name: string; instance: WorkerInstance; options?: Record<string, unknown> }>,
  options: Partial<ServerOptions> = {},
): Harness {
  const connections = new RedisConnections({ url });
  const registry = new WorkerRegistry();
  for (const worker of workers) {
    registry.register({
      name: worker.name,
      target: worker.instance.constructor as WorkerClass,
      options: worker.options ?? {},
      instance: worker.instance,
    });
  }
  const heartbeat = new FakeHeartbeat();
  const identity = newProcessIdentity();
  // These tests read the job's execution from perform, as an app that injects JobContext does.
  const executions = new ExecutionCarrier();
  executions.carry();
  const manager = new Manager({
    connections,
    registry,
    heartbeat,
    identity,
    executions,
    options: {
      ...SERVER_DEFAULTS,
      timestamps: 'seconds',
      errorHandlers: [],
      deathHandlers: [],
      logger: quietLogger,
      pollInterval: 0.2,
      fetchTimeout: 1,
      ...options,
    },
  });
  const client = new Client(connections.command, { timestamps: 'seconds' });
  return {
    manager,
    heartbeat,
    connections,
    client,
    registry,
    identity,
    async stop() {
      await manager.stop();
      await connections.close();
    },
  };
}

/**
 * Managers built for one test and stopped after it, with the server emptied
 * between tests: `const harness = useHarnesses(server)`, then
 * `harness(workers, options)` inside a test.
 */
export function useHarnesses(
  server: RedisServer,
): (...args: Parameters<typeof buildManager> extends [string, ...infer Rest] ? Rest : never) => Harness {
  const built: Harness[] = [];
  afterEach(async () => {
    while (built.length > 0) await (built.pop() as Harness).stop();
    await server.redis.flushall();
  });
  return (...args) => {
    const harness = buildManager(server.url, ...args);
    built.push(harness);
    return harness;
  };
}

/**
 * A Poller over its own connections for the enclosing describe block (Sidekiq's default dead-set limits); `poller()`
 * inside a test.
 */
export function usePoller(server: RedisServer): () => Poller {
  let connections: RedisConnections;
  let poller: Poller;
  beforeAll(() => {
    connections = new RedisConnections({ url: server.url });
    poller = new Poller(connections.command, {
      pollInterval: 5,
      timestamps: 'seconds',
      dead: { maxJobs: 10000, timeout: 15552000 },
    });
  });
  afterAll(() => connections.close());
  return () => poller;
}
