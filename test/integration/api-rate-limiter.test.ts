import { ApiRateLimiter } from '../../src/api/rate-limiter';
import { ApiProblem } from '../../src/api/problem';
import { rejectionProblem } from '../support/api-problem';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

/**
 * The per-token request limit of docs/internals/spec/contract.md §1.9 over a real Redis: a sliding window per
 * principal, shared by every process.
 */
describe('api: the rate limiter', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const limiter = (limit: number, intervalSeconds: number, intervalName: string) =>
    new ApiRateLimiter(server.redis, { limit, intervalSeconds, intervalName });

  it('admits `limit` requests per window, then answers 429 naming the limit, its window and when to come back', async () => {
    const minute = limiter(2, 60, 'minute');
    await minute.charge('p1');
    await minute.charge('p1');
    const refused = await rejectionProblem(minute.charge('p1'));
    expect(refused).toEqual({
      type: 'rate_limited',
      status: 429,
      detail: 'This token is limited to 2 requests per minute.',
      extensions: { limit: 2, interval_seconds: 60, retry_after: expect.any(Number) },
      headers: { 'Retry-After': String(refused.extensions.retry_after) },
    });
    expect(refused.extensions.retry_after).toBeGreaterThanOrEqual(59);
    expect(refused.extensions.retry_after).toBeLessThanOrEqual(60);
    expect((await rejectionProblem(limiter(1, 7, '7 seconds').charge('p1'))).detail).toBe(
      'This token is limited to 1 requests per 7 seconds.',
    );
  });

  it('keeps its window in lmtr-w:api-token:<principal>, one per principal, shared by every limiter over the same Redis', async () => {
    await limiter(1, 60, 'minute').charge('p1');
    expect(await server.redis.keys('lmtr-w:*')).toEqual(['lmtr-w:api-token:p1']);
    expect(await server.redis.zcard('lmtr-w:api-token:p1')).toBe(1);
    // Another process's limiter sees the same window; another principal has its own.
    expect((await rejectionProblem(limiter(1, 60, 'minute').charge('p1'))).type).toBe('rate_limited');
    await expect(limiter(1, 60, 'minute').charge('p2')).resolves.toBeUndefined();
  });

  it('a refused request is not charged, and the window admits again once it has slid past', async () => {
    const second = limiter(1, 1, 'second');
    await second.charge('p1');
    const started = Date.now();
    expect((await rejectionProblem(second.charge('p1'))).extensions.retry_after).toBe(1);
    // Answered at once: the limiter never waits for its window.
    expect(Date.now() - started).toBeLessThan(500);
    expect(await server.redis.zcard('lmtr-w:api-token:p1')).toBe(1);
    await waitFor(
      () =>
        second.charge('p1').then(
          () => true,
          () => false,
        ),
      { timeout: 5000, what: 'the window to slide' },
    );
  });

  it('a Redis failure propagates as itself (a 500 at the gate), never a pass', async () => {
    const lost = server.client();
    lost.disconnect();
    const error = await new ApiRateLimiter(lost, { limit: 5, intervalSeconds: 60, intervalName: 'minute' })
      .charge('p1')
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ApiProblem);
  });
});
