import 'reflect-metadata';
import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Worker, WurkModule, WurkServer } from '../../src';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

const runs: string[] = [];

@Worker({ name: 'TypedJob' })
class TypedJob {
  perform(tag: string): void {
    runs.push(tag);
    if (tag.startsWith('fail')) throw new Error(`failing ${tag}`);
  }
}

describe('chaos: every key wurk uses, filled with the wrong type', () => {
  const server = usePrivateRedis();
  let app: INestApplicationContext | undefined;

  afterAll(async () => {
    await app?.close();
  });

  it('keeps serving the queues that work, and never re-runs a job it cannot file', async () => {
    const redis = server.client();
    await redis.set('queues', 'x');
    await redis.set('queue:critical', 'x');
    await redis.set('schedule', 'x');
    await redis.set('retry', 'x');
    await redis.set('dead', 'x');
    await redis.set('processes', 'x');
    await redis.hset('stat:processed', 'a', '1');
    await redis.hset('stat:failed', 'a', '1');
    await redis.set('wurk:last_beat', 'x');
    await redis.rpush('super_fetch:reaper', 'x');
    await redis.set('wurk:repeat_orphans', 'x');
    await redis.set('queue:default|elsewhere|1|0123456789ab|0', 'x');

    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          queues: ['critical', 'default'],
          pollInterval: 0.1,
          fetchTimeout: 0.3,
          heartbeatInterval: 0.3,
          heartbeatTtl: 2,
          orphanCheckInterval: 1,
        }),
      ],
      providers: [TypedJob],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    await app.get(WurkServer).ready;

    await redis.lpush(
      'queue:default',
      JSON.stringify({ class: 'TypedJob', args: ['one'], queue: 'default', jid: 'a1', retry: true }),
    );
    await redis.lpush(
      'queue:default',
      JSON.stringify({ class: 'TypedJob', args: ['fail-1'], queue: 'default', jid: 'a2', retry: true }),
    );
    await redis.lpush(
      'queue:default',
      JSON.stringify({ class: 'TypedJob', args: ['two'], queue: 'default', jid: 'a3', retry: true }),
    );
    await waitFor(() => runs.length === 3, { timeout: 20000, what: 'the three jobs' });
    // Exposure, not synchronization: several poll, orphan-check and
    // heartbeat rounds run against the bad keys before the next push.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await redis.lpush(
      'queue:default',
      JSON.stringify({ class: 'TypedJob', args: ['three'], queue: 'default', jid: 'a4', retry: true }),
    );
    await waitFor(() => runs.includes('three'), { timeout: 20000, what: 'a job pushed after several rounds' });
    expect(runs.filter((tag) => tag === 'fail-1')).toHaveLength(1);
    expect(runs.sort()).toEqual(['fail-1', 'one', 'three', 'two']);
    expect(await redis.get('queue:critical')).toBe('x');
    expect(await redis.get('retry')).toBe('x');
  });
});
