import type Redis from 'ioredis';
import { ClaimFence, ClaimNotDurableError } from '../../src/server/fetch/claim-fence';
import { recordingLogger } from '../support/recording-logger';
import { RedisServer } from '../support/redis-server';

/** Edges of the start fence (ClaimFence) on a server with no replica, driven directly. */
describe('the start fence: its WAIT slices, and a server demoted after its last WAIT', () => {
  let server: RedisServer;
  let newMaster: RedisServer;

  beforeAll(async () => {
    [server, newMaster] = await Promise.all([RedisServer.start(), RedisServer.start()]);
  });

  afterAll(async () => {
    await Promise.all([server.stop(), newMaster.stop()]);
  });

  /** The WAITs a confirmation sends, as [replicas, timeout ms], on a server no replica follows. */
  async function waitsOf(waitTimeoutMs: number): Promise<Array<[number, number]>> {
    const fence = new ClaimFence({ replicas: 1, waitTimeoutMs, deadlineMs: 1000 }, recordingLogger());
    const connection: Redis = server.client();
    const calls = jest.spyOn(connection, 'call');
    await connection.set('claimed', '1');
    await fence.confirm(connection, fence.mark());
    return calls.mock.calls
      .filter((args) => String(args[0]).toUpperCase() === 'WAIT')
      .map((args) => [Number(args[1]), Number(args[2])]);
  }

  it('waits in slices of 200 ms at most, so a switch announced meanwhile is seen within one', async () => {
    const waits = await waitsOf(1000);
    expect(waits.length).toBeGreaterThanOrEqual(2);
    for (const wait of waits) expect(wait).toEqual([1, 200]);
  });

  it('never sends a WAIT of 0 ms (Redis reads it as "wait forever"), whatever timeout it was given', async () => {
    const waits = await waitsOf(0);
    expect(waits.length).toBeGreaterThanOrEqual(2);
    for (const wait of waits) expect(wait).toEqual([1, 200]);
  });

  /**
   * A fence past its deadline (1 ms) asking one replica, whose confirmation of a write is started; `afterWait` runs
   * once each WAIT has replied, before the fence reads that reply.
   */
  async function confirmPastDeadline(afterWait: (fence: ClaimFence) => Promise<void> | void) {
    const logger = recordingLogger();
    const fence = new ClaimFence({ replicas: 1, waitTimeoutMs: 1000, deadlineMs: 1 }, logger);
    const connection: Redis = server.client();
    const call = connection.call.bind(connection) as (...args: unknown[]) => Promise<unknown>;
    jest.spyOn(connection, 'call').mockImplementation((async (...args: unknown[]) => {
      const reply = await call(...args);
      if (String(args[0]).toUpperCase() === 'WAIT') await afterWait(fence);
      return reply;
    }) as never);
    await connection.set('claimed', '1');
    return { confirmed: fence.confirm(connection, fence.mark()), logger };
  }

  it('a switch announced while its last WAIT blocks fails the claim, said by the switch: it never runs alone', async () => {
    // The WAIT past the deadline gave nothing; the switch is announced before its reply is read.
    const { confirmed, logger } = await confirmPastDeadline((fence) => fence.switched());
    await expect(confirmed).rejects.toThrow('a claim was not run: the master moved before a replica acknowledged it');
    await expect(confirmed).rejects.toMatchObject({ saidBySwitch: true });
    expect(logger.lines).toEqual([]);
  });

  /**
   * Past the write deadline the fence asks the server its role before running a claim alone. A server demoted after
   * the last WAIT (a failover's old master rejoining as a replica) must not run it: the claim fails, naming the role.
   * Here REPLICAOF makes the server follow another one right after the fence's WAIT returns.
   */
  it('past its deadline, on a server demoted after its last WAIT: fails the claim as not durable, naming the role the server now has', async () => {
    try {
      const { confirmed, logger } = await confirmPastDeadline(async () => {
        await server.redis.call('REPLICAOF', '127.0.0.1', String(newMaster.port));
      });
      await expect(confirmed).rejects.toThrow(ClaimNotDurableError);
      await expect(confirmed).rejects.toThrow('the server is a slave now');
      expect(logger.lines.filter((line) => line.startsWith('warn no replica acknowledged'))).toEqual([]);
    } finally {
      await server.redis.call('REPLICAOF', 'NO', 'ONE');
    }
  });
});
