import { randomBytes } from 'node:crypto';
import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AdminService, ClientService, InvalidJobError, StatusService, Worker, WurkModule } from '../../src';
import type { WurkModuleOptions } from '../../src';
import { usePrivateRedis } from '../support/private-redis';
import { rejectedBy } from '../support/config-error';
import { waitFor } from '../support/wait';

const KEY_1 = randomBytes(32);
const KEY_2 = randomBytes(32);
const SECRET = { ssn: '123-45-6789', card: 'SECRET-4111' };
const seen: Array<{ worker: string; args: unknown[] }> = [];

@Worker({ queue: 'secret', encrypt: true })
class ChargeCard {
  perform(...args: unknown[]): string {
    seen.push({ worker: 'ChargeCard', args });
    return 'charged SECRET-4111';
  }
}

@Worker({ queue: 'secret', encrypt: true, retry: 3, backtrace: false })
class FailsOnce {
  perform(...args: unknown[]): void {
    seen.push({ worker: 'FailsOnce', args });
    throw new Error('declined');
  }
}

@Worker({ queue: 'secret', track: true, encrypt: true })
class Tracked {
  perform(...args: unknown[]): string {
    seen.push({ worker: 'Tracked', args });
    return 'derived from SECRET-4111';
  }
}

@Worker({ queue: 'secret' })
class Plain {
  perform(...args: unknown[]): void {
    seen.push({ worker: 'Plain', args });
  }
}

async function startApp(options: WurkModuleOptions): Promise<INestApplicationContext> {
  @Module({
    imports: [WurkModule.forRoot(options)],
    providers: [ChargeCard, FailsOnce, Tracked, Plain],
  })
  class AppModule {}
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
  await app.init();
  return app;
}

const sealedShape = {
  __wurk_enc__: true,
  iv: expect.stringMatching(/^[A-Za-z0-9+/]{16}$/),
  ct: expect.stringMatching(/^[A-Za-z0-9+/]+=*$/),
  tag: expect.stringMatching(/^[A-Za-z0-9+/]{22}==$/),
};

describe("encrypted jobs (Sidekiq Enterprise encrypt: true, in Wurk's format)", () => {
  const server = usePrivateRedis();
  let app: INestApplicationContext;
  let client: ClientService;

  beforeAll(async () => {
    app = await startApp({
      redis: { url: server.url },
      encryption: { keys: { 1: KEY_1, 2: KEY_2.toString('base64') }, current: 2 },
      server: { queues: ['secret'], concurrency: 2, pollInterval: 0.2, shutdownTimeout: 2 },
    });
    client = app.get(ClientService);
  });
  afterAll(() => app?.close());
  beforeEach(() => (seen.length = 0));

  /** Every stored payload of `key` (a list or a sorted set), as text. */
  async function stored(key: string): Promise<string[]> {
    if ((await server.redis.type(key)) === 'list') return server.redis.lrange(key, 0, -1);
    return server.redis.zrange(key, '0', '-1');
  }

  it('seals the last argument before the push reaches Redis, leaving the earlier ones clear', async () => {
    await client.set({ queue: 'parked' }).performAsync(ChargeCard, 42, SECRET);
    const [text] = await stored('queue:parked');
    expect(text).not.toContain('SECRET');
    expect(text).not.toContain('123-45-6789');
    const payload = JSON.parse(text);
    expect(payload.encrypt).toBe(true);
    expect(payload.args).toEqual([42, { ...sealedShape, v: 2 }]);
  });

  it('opens the argument before perform: the worker gets the clear value', async () => {
    await client.performAsync(ChargeCard, 7, SECRET);
    await waitFor(() => seen.length === 1, { what: 'the job to run' });
    expect(seen[0]).toEqual({ worker: 'ChargeCard', args: [7, SECRET] });
  });

  it('seals per push (set({ encrypt }) and a raw push), and opens a job sealed with an older key version', async () => {
    await client.set({ encrypt: true, queue: 'parked2' }).performAsync(Plain, 'a', 'b');
    expect(JSON.parse((await stored('queue:parked2'))[0]).args).toEqual(['a', { ...sealedShape, v: 2 }]);
    const jid = await client.push({ class: 'Plain', queue: 'parked3', args: [null, ['x']], encrypt: true });
    const raw = JSON.parse((await stored('queue:parked3'))[0]);
    expect(raw).toMatchObject({ jid, args: [null, { ...sealedShape, v: 2 }] });
    // A job sealed under version 1 (before a rotation) still opens.
    const old = await startApp({
      redis: { url: server.url },
      encryption: { keys: { 1: KEY_1.toString('hex') }, current: 1 },
      server: { processing: false },
    });
    try {
      await old.get(ClientService).push({ class: 'Plain', queue: 'secret', args: [1, 'v1 secret'], encrypt: true });
    } finally {
      await old.close();
    }
    await waitFor(() => seen.some((run) => run.args[1] === 'v1 secret'), { what: 'the v1 job to run' });
  });

  it('a failure files the retry entry with the argument still sealed', async () => {
    const jid = await client.performAsync(FailsOnce, 9, SECRET);
    await waitFor(async () => (await server.redis.zcard('retry')) === 1, { what: 'the retry entry' });
    expect(seen[0].args).toEqual([9, SECRET]);
    const [text] = await stored('retry');
    expect(text).not.toContain('SECRET');
    expect(JSON.parse(text)).toMatchObject({ jid, retry_count: 0, args: [9, { ...sealedShape, v: 2 }] });
    // The admin API shows the sealed argument as sealed, never the ciphertext as data.
    const entry = await app.get(AdminService).retries.find(jid!);
    expect(entry?.args).toEqual([9, '[encrypted data]']);
    await server.redis.del('retry');
  });

  it.each<[string, (sealed: Record<string, unknown>) => Record<string, unknown>, string]>([
    ['an unknown key version', (sealed) => ({ ...sealed, v: 9 }), 'encryption_error: no key for version 9'],
    [
      'tampered ciphertext',
      (sealed) => ({ ...sealed, ct: flip(sealed.ct as string) }),
      'encryption_error: authentication failed with key version 2 (wrong key or tampered bytes)',
    ],
  ])('%s: filed in dead at once with the reason, never retried, never run', async (_name, tamper, reason) => {
    await server.redis.del('dead', 'retry');
    const jid = await client.set({ queue: 'held' }).performAsync(ChargeCard, 5, SECRET);
    const payload = JSON.parse((await server.redis.lpop('queue:held'))!);
    payload.args[1] = tamper(payload.args[1]);
    await server.redis.lpush('queue:secret', JSON.stringify(payload));
    await waitFor(async () => (await server.redis.zcard('dead')) === 1, { what: 'the dead entry' });
    expect(await server.redis.zcard('retry')).toBe(0);
    expect(seen).toEqual([]);
    const dead = JSON.parse((await stored('dead'))[0]);
    expect(dead).toMatchObject({ jid, error_class: 'DecryptionError', error_message: reason, retry_count: 0 });
    expect(dead.args[1]).toEqual(payload.args[1]);
    for (const key of [KEY_1, KEY_2]) {
      expect(dead.error_message).not.toContain(key.toString('base64'));
      expect(dead.error_message).not.toContain(key.toString('hex'));
    }
  });

  it('keeps the result of a tracked encrypted job withheld', async () => {
    const jid = (await client.performAsync(Tracked, 1, SECRET))!;
    const status = app.get(StatusService);
    await waitFor(async () => (await status.get(jid))?.state === 'complete', { what: 'the job to complete' });
    expect(seen[0].args).toEqual([1, SECRET]);
    const row = await status.get(jid);
    expect(row?.result_withheld).toBe(true);
    expect(JSON.stringify(await server.redis.hgetall(`status:${jid}`))).not.toContain('SECRET');
  });

  it('refuses unique_for with encrypt, naming unique_for', async () => {
    const error = await rejectedBy(InvalidJobError, () =>
      client.push({ class: 'Plain', queue: 'parked', args: [1, 2], encrypt: true, unique_for: 60 }),
    );
    expect(error.field).toBe('unique_for');
  });

  it('refuses an encrypted job with no argument to seal, naming args', async () => {
    const error = await rejectedBy(InvalidJobError, () =>
      client.push({ class: 'Plain', queue: 'parked', args: [], encrypt: true }),
    );
    expect(error.field).toBe('args');
  });

  it('with no keys configured, refuses encrypt: true naming the member and writes nothing', async () => {
    const bare = await startApp({ redis: { url: server.url }, server: { processing: false } });
    try {
      const before = await server.redis.llen('queue:nokeys');
      const error = await rejectedBy(InvalidJobError, () =>
        bare.get(ClientService).push({ class: 'Plain', queue: 'nokeys', args: [1, SECRET], encrypt: true }),
      );
      expect(error.field).toBe('encrypt');
      expect(error.message).toBe('encrypt needs keys: set the encryption option (keys and current)');
      expect(await server.redis.llen('queue:nokeys')).toBe(before);
      // Ordinary pushes are unaffected.
      await bare.get(ClientService).push({ class: 'Plain', queue: 'nokeys', args: [1] });
      expect(await server.redis.llen('queue:nokeys')).toBe(before + 1);
    } finally {
      await bare.close();
    }
  });
});

/** The base64 of `text`'s bytes with the first one flipped. */
function flip(text: string): string {
  const bytes = Buffer.from(text, 'base64');
  bytes[0] ^= 0xff;
  return bytes.toString('base64');
}
