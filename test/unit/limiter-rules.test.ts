import type Redis from 'ioredis';
import { BucketLimiter } from '../../src/limiter/bucket-limiter';
import { ConcurrentLimiter } from '../../src/limiter/concurrent-limiter';
import { LeakyLimiter } from '../../src/limiter/leaky-limiter';
import { PointsLimiter } from '../../src/limiter/points-limiter';
import { WindowLimiter } from '../../src/limiter/window-limiter';
import { WurkConfigError } from '../../src/job/errors';

/** Constructors check their input before any Redis call: no connection is needed to refuse it. */
const redis = {} as Redis;

describe('limiter input rules', () => {
  it.each([
    ['a size of 0', () => new BucketLimiter(redis, 'b', 0, 'second'), /limiter b: size must be a positive integer/],
    ['a negative size', () => new LeakyLimiter(redis, 'l', -1, 'minute'), /limiter l: size must be a positive/],
    ['a fractional size', () => new PointsLimiter(redis, 'p', 1.5, 'hour'), /limiter p: size must be a positive/],
    ['a concurrent size of 0', () => new ConcurrentLimiter(redis, 'c', 0), /limiter c: size must be a positive/],
    ['a window limit of 0', () => new WindowLimiter(redis, 'w', 0, 'second'), /limiter w: limit must be a positive/],
    [
      'an unknown bucket interval',
      () => new BucketLimiter(redis, 'b', 5, 'fortnight' as never),
      /limiter b: interval must be one of second, minute, hour, day \(got "fortnight"\)/,
    ],
    [
      'a bucket interval in raw seconds (the boundary needs a unit)',
      () => new BucketLimiter(redis, 'b', 5, 60 as never),
      /limiter b: interval must be one of second, minute, hour, day/,
    ],
    ['an unknown drain', () => new LeakyLimiter(redis, 'l', 5, 'week' as never), /limiter l: drain must be one of/],
    ['a drain of 0 seconds', () => new LeakyLimiter(redis, 'l', 5, 0), /limiter l: drain must be a positive/],
    ['an unknown points interval', () => new PointsLimiter(redis, 'p', 5, 'ms' as never), /limiter p: interval/],
    ['a window of 1.5 s', () => new WindowLimiter(redis, 'w', 5, 1.5), /limiter w: interval must be a positive/],
    ['a negative wait', () => new BucketLimiter(redis, 'b', 5, 'second', { waitTimeout: -1 }), /b: waitTimeout/],
    ['a ttl under a day', () => new LeakyLimiter(redis, 'l', 5, 'second', { ttl: 3600 }), /limiter l: ttl must be/],
    ['a lock timeout of 0', () => new ConcurrentLimiter(redis, 'c', 1, { lockTimeout: 0 }), /c: lockTimeout/],
    ['a name with a space', () => new BucketLimiter(redis, 'stripe api', 5, 'second'), /limiter name must be/],
    ['an empty name', () => new PointsLimiter(redis, '', 5, 'second'), /limiter name must be/],
    ['a name with a glob', () => new WindowLimiter(redis, 'a*', 5, 'second'), /limiter name must be/],
    ['a name of 256 characters', () => new LeakyLimiter(redis, 'n'.repeat(256), 5, 1), /limiter name must be/],
  ])('refuses %s with a WurkConfigError naming the field', (_, build, message) => {
    expect(build).toThrow(WurkConfigError);
    expect(build).toThrow(message);
  });

  it('accepts the names Sidekiq Enterprise and Wurk accept', () => {
    for (const name of ['stripe', 'api-token:0123abcd', 'user.42#mail@eu', 'x_y-z']) {
      expect(new BucketLimiter(redis, name, 1, 'day').name).toBe(name);
    }
  });

  it('refuses points that are not a positive integer, or exceed the size, before any Redis call', async () => {
    const limiter = new PointsLimiter(redis, 'p', 10, 'second');
    await expect(limiter.within(11, () => 'ran')).rejects.toThrow(/limiter p: points must not exceed the size 10/);
    await expect(limiter.within(0, () => 'ran')).rejects.toThrow(/limiter p: points must be a positive integer/);
    await expect(limiter.tryAcquire(2.5)).rejects.toThrow(WurkConfigError);
  });
});
