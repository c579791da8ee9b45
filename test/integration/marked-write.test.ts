import Redis from 'ioredis';
import { RedisPushTransport } from '../../src/client/push-transport';
import { JobPayload } from '../../src/job/payload';
import { PartlyAppliedError } from '../../src/redis/redis-errors';
import { RedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait';

const job = (arg: number): JobPayload =>
  JobPayload.parse(`{"class":"X","queue":"default","args":[${arg}],"jid":"jid-${arg}"}`);

/**
 * Pushes that wait for a replica (the default under Sentinel) are sent again
 * when the acknowledgment does not come. The copy sent first may already be
 * on the server the re-send reaches (the replica that got it was promoted,
 * the acknowledgment lost in the switch): it must not be applied twice.
 */
describe('a push that waits for a replica, sent again: applied once (marked write)', () => {
  const master = new RedisServer({ extraArgs: ['--repl-diskless-sync-delay', '0'] });
  const replica = new RedisServer();
  let admin: Redis;
  let replicaAdmin: Redis;
  const clients: Redis[] = [];

  beforeAll(async () => {
    await master.boot();
    await replica.boot();
    admin = new Redis(master.port, '127.0.0.1');
    replicaAdmin = new Redis(replica.port, '127.0.0.1');
  });

  afterEach(async () => {
    await replicaAdmin.call('REPLICAOF', 'NO', 'ONE');
    await admin.flushall();
    for (const client of clients.splice(0)) client.disconnect();
  });

  afterAll(async () => {
    admin.disconnect();
    replicaAdmin.disconnect();
    await replica.stop();
    await master.stop();
  });

  function producer(): Redis {
    const client = new Redis(master.port, '127.0.0.1', { connectionName: 'producer', maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  }

  async function attachReplica(): Promise<void> {
    await replicaAdmin.call('REPLICAOF', '127.0.0.1', String(master.port));
    await waitFor(async () => (await replicaAdmin.info('replication')).includes('master_link_status:up'), {
      timeout: 10000,
      interval: 50,
      what: 'the replica in sync',
    });
  }

  it('goes out as one MULTI with a marker that outlives the deadline; acknowledged by the replica, it is done', async () => {
    await attachReplica();
    const transport = new RedisPushTransport(producer(), { replicas: 1, waitTimeoutMs: 500, deadlineMs: 4000 });
    await transport.write([job(1)], [], Date.now());
    expect(await admin.llen('queue:default')).toBe(1);
    const markers = await admin.keys('wurk:written:*');
    expect(markers).toHaveLength(1);
    const ttl = await admin.pttl(markers[0]);
    expect(ttl).toBeGreaterThan(4000);
    expect(ttl).toBeLessThanOrEqual(14000);
    // The replica has the job and the marker: a replica that has the marker has every write of its transaction.
    await waitFor(async () => (await replicaAdmin.llen('queue:default')) === 1, { timeout: 5000, what: 'replicated' });
    expect(await replicaAdmin.exists(markers[0])).toBe(1);
  });

  it('a connection lost before the replica acknowledged: the re-send finds its copy and pushes nothing more', async () => {
    const transport = new RedisPushTransport(producer(), { replicas: 1, waitTimeoutMs: 100, deadlineMs: 10000 });
    const push = transport.write([job(2)], [], Date.now());
    // The first copy is in; no replica acknowledges it yet.
    await waitFor(async () => (await admin.llen('queue:default')) === 1, { timeout: 5000, what: 'the first copy' });
    // The connection drops with the WAIT unanswered: the write's fate is unknown to the producer, so it is sent again.
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await waitFor(connectedProducer, { timeout: 5000, interval: 20, what: 'the producer reconnected' });
    await attachReplica();
    await push;
    expect(await admin.lrange('queue:default', 0, -1)).toHaveLength(1);
    expect(await admin.scard('queues')).toBe(1);
  });

  it('a copy that never landed is written in full by the re-send', async () => {
    const transport = new RedisPushTransport(producer(), { replicas: 1, waitTimeoutMs: 100, deadlineMs: 10000 });
    // Writes refused as on a master being demoted: the first attempt applies nothing and is sent again.
    await admin.config('SET', 'min-replicas-to-write', '1');
    try {
      const push = transport.write([job(3)], [], Date.now());
      await waitFor(async () => /errorstat_NOREPLICAS:count=[1-9]/.test(await admin.info('errorstats')), {
        timeout: 5000,
        interval: 20,
        what: 'the first attempt refused',
      });
      expect(await admin.llen('queue:default')).toBe(0);
      await admin.config('SET', 'min-replicas-to-write', '0');
      await attachReplica();
      await push;
    } finally {
      await admin.config('SET', 'min-replicas-to-write', '0');
    }
    expect(await admin.lrange('queue:default', 0, -1)).toHaveLength(1);
  });

  it('a refusal inside the transaction keeps its meaning: the LPUSH in beside a refused SADD is PartlyAppliedError', async () => {
    await attachReplica();
    await admin.set('queues', 'not a set');
    const transport = new RedisPushTransport(producer(), { replicas: 1, waitTimeoutMs: 500, deadlineMs: 4000 });
    await expect(transport.write([job(4)], [], Date.now())).rejects.toBeInstanceOf(PartlyAppliedError);
    expect(await admin.llen('queue:default')).toBe(1);
  });

  async function connectedProducer(): Promise<boolean> {
    return String(await admin.call('CLIENT', 'LIST')).includes('name=producer');
  }
});
