import Redis from 'ioredis';
import { Client, PeriodicManager, resolvePeriodicEntry } from '../../src/entries/internals';
import { runScript } from '../../src/redis/scripts';
import { commandDelta, commandStats } from '../support/command-counter';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

describe('periodic: what a tick costs in Redis commands', () => {
  const server = usePrivateRedis();
  const connections: Redis[] = [];
  const managers: PeriodicManager[] = [];

  afterAll(async () => {
    await Promise.all(managers.map((manager) => manager.stop()));
    for (const connection of connections) connection.disconnect();
  });

  it('a slot costs the winner 4 commands and each other process 2; a tick with no new slot costs none', async () => {
    // Scripts loaded beforehand, so no NOSCRIPT round trip is counted.
    await runScript(server.redis, 'periodic_claim', ['w:r', 'w:l', 'w:k'], [1, '', 1, 'x', 1, '']);
    const entry = resolvePeriodicEntry({ cron: '@yearly', class: 'Cost', queue: 'cost' }, 'cost');
    const ticks = [0, 0, 0];
    for (const index of [0, 1, 2]) {
      const connection = server.client();
      connections.push(connection);
      const client = new Client(connection, { timestamps: 'seconds' });
      // A yearly slot stands for "due now": fired at first sight, as seed 004 does.
      const manager = new PeriodicManager(connection, (payload) => client.push(payload), [entry], {
        tickInterval: 0.2,
        newEntryGrace: Infinity,
        logger: quiet,
      });
      manager.ticker.on('tick', () => ticks[index]++);
      managers.push(manager);
    }
    await Promise.all(connections.map((connection) => connection.ping()));

    const before = await commandStats(server.redis);
    for (const manager of managers) manager.start();
    await waitFor(() => ticks.every((count) => count >= 2), { what: 'every process to tick twice' });
    const slot = commandDelta(before, await commandStats(server.redis));
    // Each process: SMEMBERS periodic:disabled + the claim script; the winner: SADD queues + LPUSH (one pipeline);
    // HSET: publishing at start.
    // INFO also counts the commands run inside the scripts: each claim's GET last_slot, and the winner's SET NX slot
    // lock and SET last_slot.
    expect(slot).toEqual({ hset: 3, smembers: 3, evalsha: 3, get: 3, set: 2, sadd: 1, lpush: 1 });
    expect(await server.redis.llen('queue:cost')).toBe(1);

    const idleFrom = await commandStats(server.redis);
    const counted = [...ticks];
    await waitFor(() => ticks.every((count, index) => count >= counted[index] + 5), { what: 'five more ticks each' });
    expect(commandDelta(idleFrom, await commandStats(server.redis))).toEqual({});
  });
});
