import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import Redis from 'ioredis';
import { transferableRedisOptions } from '../../src/server/heartbeat/heartbeat-redis-options';
import { newProcessIdentity } from '../../src/server/identity';
import { TS_LOADER } from '../support/ts-loader-path';

/** What crosses to the heartbeat thread, and the identity it beats under. */
describe('heartbeat: thread data and identity', () => {
  it('passes Redis options on without their functions, deep, keeping buffers and arrays as they are', () => {
    const ca = Buffer.from('certificate');
    const options = {
      url: 'redis://127.0.0.1:1',
      retryStrategy: () => 10,
      tls: { ca, checkServerIdentity: () => undefined, servername: 'redis' },
      sentinels: [
        { host: 'a', port: 1 },
        { host: 'b', port: 2 },
      ],
      nothing: null,
    };
    const passed = transferableRedisOptions(options) as Record<string, unknown>;
    expect(passed).toEqual({
      url: 'redis://127.0.0.1:1',
      tls: { ca, servername: 'redis' },
      sentinels: [
        { host: 'a', port: 1 },
        { host: 'b', port: 2 },
      ],
      nothing: null,
    });
    expect((passed.tls as { ca: Buffer }).ca).toBeInstanceOf(Buffer);
    // Gone, not kept as undefined members: one of those would override a default in a spread.
    expect(passed).not.toHaveProperty('retryStrategy');
    expect(passed.tls).not.toHaveProperty('checkServerIdentity');
    expect(transferableRedisOptions(undefined)).toBeUndefined();
    expect(transferableRedisOptions({ list: [() => 1, 'x'] } as never)).toEqual({ list: [undefined, 'x'] });
  });

  it("leaves the thread's own code to the thread: wurk's entry loads the messages and the options' copy, not the loop, its writers or its client", () => {
    const code = `require(${JSON.stringify(TS_LOADER)}); require('./src');
      console.log(JSON.stringify(Object.keys(require.cache).filter((f) => f.includes('/src/')).map((f) => f.replace(/.*\\/src\\//, ''))));`;
    const run = spawnSync(process.execPath, ['-e', code], {
      cwd: join(__dirname, '..', '..'),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    const loaded = JSON.parse(run.stdout.trim().split('\n').pop()!) as string[];
    expect(loaded).toEqual(
      expect.arrayContaining([
        'server/heartbeat/heartbeat.ts',
        'server/heartbeat/heartbeat-messages.ts',
        'server/heartbeat/heartbeat-redis-options.ts',
      ]),
    );
    const threadOnly = [
      'server/heartbeat/heartbeat-loop.ts',
      'server/heartbeat/heartbeat-writer.ts',
      'server/heartbeat/heartbeat-connection.ts',
      'server/metrics/execution-metrics-writer.ts',
      'server/heartbeat/resp-connection.ts',
      'server/heartbeat/resp-protocol.ts',
      'server/heartbeat/plain-target.ts',
      'server/heartbeat/ioredis-command-connection.ts',
    ];
    expect(loaded.filter((file) => threadOnly.includes(file))).toEqual([]);
  }, 60_000);

  it("takes an ioredis instance's own options", () => {
    const redis = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true, db: 3 });
    try {
      const passed = transferableRedisOptions(redis) as Record<string, unknown>;
      expect(passed).toMatchObject({ host: '127.0.0.1', port: 1, db: 3 });
      expect(Object.values(passed).some((value) => typeof value === 'function')).toBe(false);
    } finally {
      redis.disconnect();
    }
  });

  it("is Sidekiq's hostname:pid:nonce, with DYNO winning over the hostname as on Heroku", () => {
    const saved = process.env.DYNO;
    try {
      delete process.env.DYNO;
      const plain = newProcessIdentity();
      expect(plain.identity).toBe(`${plain.hostname}:${process.pid}:${plain.nonce}`);
      expect(plain.pid).toBe(process.pid);
      expect(plain.nonce).toMatch(/^[0-9a-f]{12}$/);
      expect(newProcessIdentity().nonce).not.toBe(plain.nonce);
      process.env.DYNO = 'web.1';
      expect(newProcessIdentity().hostname).toBe('web.1');
      process.env.DYNO = '';
      expect(newProcessIdentity().hostname).toBe(plain.hostname);
    } finally {
      if (saved === undefined) delete process.env.DYNO;
      else process.env.DYNO = saved;
    }
  });
});
