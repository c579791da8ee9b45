import Redis from 'ioredis';
import { Client } from '../../src/client/client';
import { RedisPushTransport } from '../../src/client/push-transport';
import { JobPayload } from '../../src/job/payload';
import { closeConnection } from '../../src/redis/connection';
import { PartlyAppliedError, RedisUnavailableError } from '../../src/redis/redis-errors';
import { freePort } from '../support/redis-server';
import { usePrivateRedis } from '../support/private-redis';

const job = (arg: number): JobPayload =>
  JobPayload.parse(`{"class":"X","queue":"default","args":[${arg}],"jid":"jid-${arg}"}`);
const scheduled = (arg: number) => ({ job: job(arg), score: '1900000000.5' });

/** What a push that failed rejected with: a PartlyAppliedError says "some of it is in Redis, do not resend it all". */
const failureOf = (push: Promise<unknown>): Promise<unknown> =>
  push.then(
    () => {
      throw new Error('expected the push to fail');
    },
    (error: unknown) => error,
  );

describe('RedisPushTransport against a real redis-server', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let connection: Redis;

  beforeAll(() => {
    connection = server.client();
  });

  describe('write: immediate and scheduled jobs in one call', () => {
    it('writes every job it is given, immediate and scheduled alike, with or without hooks', async () => {
      await new RedisPushTransport(connection).write([], [scheduled(1)], Date.now());
      await new RedisPushTransport(connection).write([job(2)], [scheduled(3)], Date.now());
      const hooked = new RedisPushTransport(connection);
      hooked.addPipelineHook(() => undefined);
      await hooked.write([job(4)], [scheduled(5)], Date.now());
      expect((await server.redis.lrange('queue:default', 0, -1)).map((raw) => JSON.parse(raw).args[0]).sort()).toEqual([
        2, 4,
      ]);
      expect((await server.redis.zrange('schedule', 0, '-1')).map((raw) => JSON.parse(raw).args[0]).sort()).toEqual([
        1, 3, 5,
      ]);
      expect(await server.redis.smembers('queues')).toEqual(['default']);
    });

    // A hook that always applies sends the push through the pipeline; its HSET succeeds.
    const hookedTransport = () => {
      const transport = new RedisPushTransport(connection);
      transport.addPipelineHook((pipeline, pushed) => {
        pipeline.hset('side', pushed.jid, '1');
      });
      return transport;
    };

    it('runs a hook without appliesTo on a single immediate push; a hook whose appliesTo says no lets it skip the pipeline', async () => {
      const transport = hookedTransport();
      expect(transport.hooksApply(job(1))).toBe(true);
      await transport.write([job(1)], [], Date.now());
      expect(await server.redis.hget('side', 'jid-1')).toBe('1');
      const declined = new RedisPushTransport(connection);
      declined.addPipelineHook(
        (pipeline, pushed) => void pipeline.hset('other', pushed.jid, '1'),
        () => false,
      );
      expect(declined.hooksApply(job(2))).toBe(false);
    });

    it('is a PartlyAppliedError when the LPUSH went in and the queue registry (SADD) was refused', async () => {
      await server.redis.set('queues', 'not a set');
      expect(await failureOf(hookedTransport().write([job(1)], [], Date.now()))).toBeInstanceOf(PartlyAppliedError);
      expect(await server.redis.llen('queue:default')).toBe(1);
    });

    it('is the plain refusal when the LPUSH was refused, whatever the SADD and the side writes did', async () => {
      await server.redis.set('queue:default', 'not a list');
      const failure = await failureOf(hookedTransport().write([job(1)], [], Date.now()));
      expect(failure).not.toBeInstanceOf(PartlyAppliedError);
      expect(String(failure)).toMatch(/WRONGTYPE/);
      expect(await server.redis.hexists('side', 'jid-1')).toBe(1);
    });

    it('is a PartlyAppliedError when the ZADD of its scheduled jobs went in beside a refused LPUSH', async () => {
      await server.redis.set('queue:default', 'not a list');
      expect(await failureOf(hookedTransport().write([job(1)], [scheduled(2)], Date.now()))).toBeInstanceOf(
        PartlyAppliedError,
      );
      expect(await server.redis.zcard('schedule')).toBe(1);
    });
  });

  describe('writeRendered: the spliced bulk path', () => {
    let client: Client;
    beforeAll(() => {
      client = new Client(connection, { timestamps: 'seconds' });
    });

    it('is a PartlyAppliedError when the LPUSH went in and the SADD was refused', async () => {
      await server.redis.set('queues', 'not a set');
      expect(await failureOf(client.pushBulk({ class: 'X', args: [[1], [2]] }))).toBeInstanceOf(PartlyAppliedError);
      expect(await server.redis.llen('queue:default')).toBe(2);
    });

    it('is the plain refusal when the LPUSH was refused', async () => {
      await server.redis.set('queue:default', 'not a list');
      const failure = await failureOf(client.pushBulk({ class: 'X', args: [[1], [2]] }));
      expect(failure).not.toBeInstanceOf(PartlyAppliedError);
      expect(String(failure)).toMatch(/WRONGTYPE/);
    });
  });

  it('names the server it gave up on: host and port as the connection has them', async () => {
    const port = await freePort();
    const nowhere = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null });
    try {
      const transport = new RedisPushTransport(nowhere, { replicas: 0, waitTimeoutMs: 100, deadlineMs: 200 });
      const failure = await failureOf(transport.write([job(1)], [scheduled(2)], Date.now()));
      expect(failure).toBeInstanceOf(RedisUnavailableError);
      expect((failure as RedisUnavailableError).server).toBe(`127.0.0.1:${port}`);
      expect((failure as Error).message).toMatch(
        new RegExp(`^Redis at 127\\.0\\.0\\.1:${port} is unavailable: gave up after 0\\.2 s`),
      );
    } finally {
      // Not disconnect(): on a connection that already ended it arms ioredis's 2 s destroy timer, which
      // nothing clears, and Jest then waits on it past the end of the run.
      await closeConnection(nowhere);
    }
  });
});
