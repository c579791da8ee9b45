import { createHash } from 'node:crypto';
import type { ApiResponse } from '../../src/api/response';
import { rejectionProblem } from '../support/api-problem';
import { freshEachTest } from '../support/fresh-module';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

const TTL = 600;

/**
 * The Idempotency-Key guard (docs/internals/spec/contract.md §1.8) over a real Redis: claim, replay, misuse, release,
 * keep.
 */
describe('api: the idempotency guard', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  // Loaded per test, with the classes it tells apart: the key shape is built at import.
  const fresh = freshEachTest(() => ({
    ...(require('../../src/api/idempotency') as typeof import('../../src/api/idempotency')),
    ...(require('../../src/api/problem') as typeof import('../../src/api/problem')),
    ...(require('../../src/api/response') as typeof import('../../src/api/response')),
    ...(require('../../src/redis/redis-errors') as typeof import('../../src/redis/redis-errors')),
  }));
  const jsonResponse = (...args: Parameters<typeof fresh.module.jsonResponse>) => fresh.module.jsonResponse(...args);
  const idempotencyKey = (header: string | string[] | undefined) => fresh.module.idempotencyKey(header);
  const pushMayHaveApplied = (error: unknown) => fresh.module.pushMayHaveApplied(error);
  const silent = { error: () => undefined };
  const guard = () => new fresh.module.IdempotencyGuard(server.redis, TTL, silent);
  /** A guard whose logger keeps every line it is given. */
  const recorded = (redis = server.redis) => {
    const lines: string[] = [];
    return { lines, guard: new fresh.module.IdempotencyGuard(redis, TTL, { error: (message) => lines.push(message) }) };
  };
  const SLOT = 'idempotency:test-slot';
  const created = (): Promise<ApiResponse> => Promise.resolve(jsonResponse(201, { jid: 'abc' }));

  it('takes 1 to 255 printable ASCII characters without spaces as a key, and nothing else', () => {
    expect(idempotencyKey(undefined)).toBeUndefined();
    expect(idempotencyKey(`a!~${'x'.repeat(252)}`)).toHaveLength(255);
    for (const bad of ['', ' ', 'a b', 'x'.repeat(256), 'ü', 'tab\t', ['a', 'b']]) {
      expect(() => idempotencyKey(bad)).toThrow(
        new fresh.module.ApiProblem(
          'invalid_request',
          'The Idempotency-Key header must be 1 to 255 printable ASCII characters without spaces.',
        ),
      );
    }
  });

  it('scopes the slot by credential, route and key, and keeps the key itself out of Redis', () => {
    const slot = guard().slot('principal', 'POST /v1/jobs', 'key-1');
    expect(slot).toBe(`idempotency:${createHash('sha256').update('principal\nPOST /v1/jobs\nkey-1').digest('hex')}`);
    expect(
      new Set([
        slot,
        guard().slot('other', 'POST /v1/jobs', 'key-1'),
        guard().slot('principal', 'POST /v1/jobs/bulk', 'key-1'),
        guard().slot('principal', 'POST /v1/jobs', 'key-2'),
      ]).size,
    ).toBe(4);
  });

  it('stores a success for the key lifetime and replays it for the same body, without running again', async () => {
    let runs = 0;
    const first = await guard().around(SLOT, Buffer.from('{"class":"A"}'), () => (runs++, created()));
    expect(first.status).toBe(201);
    const ttl = await server.redis.ttl(SLOT);
    expect(ttl).toBeGreaterThan(TTL - 2);
    const replay = await guard().around(SLOT, Buffer.from('{"class":"A"}'), () => (runs++, created()));
    expect(runs).toBe(1);
    expect(replay).toEqual({
      status: 201,
      body: first.body,
      contentType: 'application/json',
      headers: { 'Idempotency-Replayed': 'true' },
    });
    expect(await server.redis.ttl(SLOT)).toBeLessThanOrEqual(ttl);
  });

  it('a claim that lapsed while the push ran is not brought back: no record without a TTL is left behind', async () => {
    const response = await guard().around(SLOT, Buffer.from('{}'), async () => {
      await server.redis.del(SLOT);
      return created();
    });
    expect(response.status).toBe(201);
    expect(await server.redis.exists(SLOT)).toBe(0);
  });

  it('answers 409 to another body under the same key, whatever became of the first', async () => {
    await guard().around(SLOT, Buffer.from('{"class":"A"}'), created);
    expect(await rejectionProblem(guard().around(SLOT, Buffer.from('{"class":"B"}'), created))).toEqual({
      type: 'idempotency_key_reused',
      status: 409,
      detail: 'This Idempotency-Key was already used with a different request body.',
      extensions: {},
      headers: {},
    });
  });

  it('answers 409 "in progress" with Retry-After while the first request runs, or when the record is unreadable', async () => {
    let finish: (response: ApiResponse) => void = () => undefined;
    const first = guard().around(SLOT, Buffer.from('{}'), () => new Promise((resolve) => (finish = resolve)));
    const inProgress = {
      type: 'request_in_progress',
      status: 409,
      extensions: {},
      detail: 'A request with this Idempotency-Key is still being processed; retry shortly.',
      headers: { 'Retry-After': '1' },
    };
    await waitFor(async () => (await server.redis.exists(SLOT)) === 1, { what: 'the first request’s claim' });
    expect(await rejectionProblem(guard().around(SLOT, Buffer.from('{}'), created))).toEqual(inProgress);
    finish(jsonResponse(201, {}));
    await first;
    const fingerprint = createHash('sha256').update('{}').digest('hex');
    for (const garbage of [
      'garbage',
      `201\n${fingerprint}`,
      `600\n${fingerprint}\n{}`,
      `20\n${fingerprint}\n{}`,
      `2011\n${fingerprint}\n{}`,
    ]) {
      await server.redis.set(SLOT, garbage, 'EX', TTL);
      expect(await rejectionProblem(guard().around(SLOT, Buffer.from('{}'), created))).toEqual(inProgress);
    }
    await server.redis.set(SLOT, `599\n${fingerprint}\n{"kept":1}`, 'EX', TTL);
    expect(await guard().around(SLOT, Buffer.from('{}'), created)).toMatchObject({ status: 599, body: '{"kept":1}' });
  });

  it('releases the key after an answer of 300 and up, so a corrected request may use it; keeps one below 300', async () => {
    await guard().around(SLOT, Buffer.from('{}'), async () => jsonResponse(300, {}));
    expect(await server.redis.exists(SLOT)).toBe(0);
    await guard().around(SLOT, Buffer.from('{}'), async () => jsonResponse(299, {}));
    expect(await server.redis.get(SLOT)).toMatch(/^299\n/);
  });

  it('releases the key when the push failed without reaching Redis, keeps it when the push may have landed', async () => {
    const fails = (error: unknown) => () => Promise.reject(error);
    await expect(guard().around(SLOT, Buffer.from('{}'), fails(new Error('WRONGTYPE')))).rejects.toThrow('WRONGTYPE');
    expect(await server.redis.exists(SLOT)).toBe(0);
    await expect(
      guard().around(
        SLOT,
        Buffer.from('{}'),
        fails(new fresh.module.WriteMayHaveAppliedError(new fresh.module.CommandInDoubtError('EVALSHA'))),
      ),
    ).rejects.toThrow(fresh.module.WriteMayHaveAppliedError);
    expect(await server.redis.get(SLOT)).toMatch(/^0\n/);
  });

  it('answers a success even when storing it fails (the job is enqueued); the claim then stays pending: a retry meets 409, never a second run', async () => {
    const lost = server.client();
    const { guard: losing, lines } = recorded(lost);
    const response = await losing.around(SLOT, Buffer.from('{}'), () => {
      lost.disconnect();
      return created();
    });
    expect(response.status).toBe(201);
    expect(lines).toEqual([
      `Idempotency-Key ${SLOT}: the answer was sent but not stored (Connection is closed.); retries get 409 until the key expires`,
    ]);
    expect(await server.redis.get(SLOT)).toMatch(/^0\n/);
    let runs = 0;
    expect((await rejectionProblem(guard().around(SLOT, Buffer.from('{}'), () => (runs++, created())))).type).toBe(
      'request_in_progress',
    );
    expect(runs).toBe(0);
  });

  it('a request that failed, or answered 300 and up, gets its own answer even when the release fails too', async () => {
    const lost = server.client();
    const refused = new fresh.module.ApiProblem('invalid_request', 'The field at is not a finite number.');
    const { guard: losing, lines } = recorded(lost);
    const failure = await losing
      .around(SLOT, Buffer.from('{}'), () => {
        lost.disconnect();
        return Promise.reject(refused);
      })
      .catch((error: unknown) => error);
    expect(failure).toBe(refused);
    const gone = server.client();
    const second = recorded(gone);
    const answered = await second.guard.around('idempotency:other', Buffer.from('{}'), async () => {
      gone.disconnect();
      return jsonResponse(404, {});
    });
    expect(answered.status).toBe(404);
    const released = (slot: string) =>
      `Idempotency-Key ${slot}: could not be released (Connection is closed.); retries get 409 until the key expires`;
    expect([...lines, ...second.lines]).toEqual([released(SLOT), released('idempotency:other')]);
  });

  it('a slot key Redis cannot read fails the request before anything runs', async () => {
    await server.redis.hset(SLOT, 'not', 'a string');
    let runs = 0;
    await expect(guard().around(SLOT, Buffer.from('{}'), () => (runs++, created()))).rejects.toThrow(/WRONGTYPE/);
    expect(runs).toBe(0);
  });

  it('takes only a dropped connection, Redis away, or a push that landed in part as "may have applied"', () => {
    expect(pushMayHaveApplied(new fresh.module.CommandInDoubtError('LPUSH'))).toBe(true);
    expect(pushMayHaveApplied(new fresh.module.RedisUnavailableError('127.0.0.1:1', 'down'))).toBe(true);
    expect(pushMayHaveApplied(new fresh.module.PartlyAppliedError(new Error('x')))).toBe(true);
    expect(pushMayHaveApplied(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe(
      false,
    );
    expect(new fresh.module.WriteMayHaveAppliedError(new Error('gone')).message).toBe(
      'the push may have been applied: gone',
    );
    expect(new fresh.module.WriteMayHaveAppliedError('gone').message).toBe('the push may have been applied: gone');
    expect(new fresh.module.WriteMayHaveAppliedError('gone').name).toBe('WriteMayHaveAppliedError');
  });
});
