import type Redis from 'ioredis';
import { ClaimFence, ClaimNotDurableError } from '../../src/server/fetch/claim-fence';
import { recordingLogger } from '../support/recording-logger';
import { RedisServer } from '../support/redis-server';

/**
 * Past the write deadline the fence asks the server its role before running a claim alone. A server demoted after
 * the last WAIT (a failover's old master rejoining as a replica) must not run it: the claim fails, naming the role.
 * Here REPLICAOF makes the server follow another one right after the fence's WAIT returns.
 */
describe('the start fence past its deadline, on a server demoted after its last WAIT', () => {
  let server: RedisServer;
  let newMaster: RedisServer;

  beforeAll(async () => {
    [server, newMaster] = await Promise.all([RedisServer.start(), RedisServer.start()]);
  });

  afterAll(async () => {
    await Promise.all([server.stop(), newMaster.stop()]);
  });

  it('fails the claim as not durable, naming the role the server now has, and never runs it alone', async () => {
    const logger = recordingLogger();
    const fence = new ClaimFence({ replicas: 1, waitTimeoutMs: 1000, deadlineMs: 1 }, logger);
    const connection: Redis = server.client();
    const call = connection.call.bind(connection) as (...args: unknown[]) => Promise<unknown>;
    jest.spyOn(connection, 'call').mockImplementation((async (...args: unknown[]) => {
      const reply = await call(...args);
      if (String(args[0]).toUpperCase() === 'WAIT')
        await server.redis.call('REPLICAOF', '127.0.0.1', String(newMaster.port));
      return reply;
    }) as never);
    try {
      await connection.set('claimed', '1');
      const confirmed = fence.confirm(connection, fence.mark());
      await expect(confirmed).rejects.toThrow(ClaimNotDurableError);
      await expect(confirmed).rejects.toThrow('the server is a slave now');
      expect(logger.lines.filter((line) => line.startsWith('warn no replica acknowledged'))).toEqual([]);
    } finally {
      await server.redis.call('REPLICAOF', 'NO', 'ONE');
    }
  });
});
