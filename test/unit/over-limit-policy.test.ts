import { JobPayload } from '../../src/job/payload';
import { defaultOverLimitBackoff, isOverLimit, overratedCount } from '../../src/server/over-limit-policy';

/** How a job over its limiter is rescheduled (Sidekiq Enterprise's OverLimit middleware), without Redis. */
describe('over-limit policy', () => {
  afterEach(() => jest.restoreAllMocks());

  it('backs off 5 s per reschedule up to 300 s, plus up to `count` seconds of jitter', () => {
    jest.spyOn(Math, 'random').mockReturnValue(0.5);
    expect(defaultOverLimitBackoff(1, new Error('over'))).toBe(5.5);
    expect(defaultOverLimitBackoff(4, undefined)).toBe(22);
    expect(defaultOverLimitBackoff(100, undefined)).toBe(350);
    jest.spyOn(Math, 'random').mockReturnValue(0);
    expect(defaultOverLimitBackoff(60, undefined)).toBe(300);
  });

  it("never comes back sooner than the limiter's own retryAfter; a retryAfter that is not a number counts for nothing", () => {
    jest.spyOn(Math, 'random').mockReturnValue(0.5);
    expect(defaultOverLimitBackoff(2, Object.assign(new Error('over'), { retryAfter: 42 }))).toBe(43);
    expect(defaultOverLimitBackoff(2, Object.assign(new Error('over'), { retryAfter: 3 }))).toBe(11);
    expect(defaultOverLimitBackoff(2, Object.assign(new Error('over'), { retryAfter: '42' }))).toBe(11);
  });

  it('knows an over-limit error by its name, so a second copy of the package counts too', () => {
    class OverLimitError extends Error {
      override name = 'OverLimitError';
    }
    expect(isOverLimit(new OverLimitError('x'))).toBe(true);
    expect(isOverLimit(new Error('OverLimitError'))).toBe(false);
    expect(isOverLimit({ name: 'OverLimitError' })).toBe(false);
  });

  it("reads the payload's overrated count, anything but a positive integer as none", () => {
    const count = (overrated: unknown) =>
      overratedCount(JobPayload.parse(JSON.stringify({ class: 'Api', args: [], jid: 'a'.repeat(24), overrated })));
    expect(count(3)).toBe(3);
    for (const none of [0, -1, 1.5, '3', null]) expect(count(none)).toBe(0);
    expect(overratedCount(JobPayload.parse(JSON.stringify({ class: 'Api', args: [], jid: 'a'.repeat(24) })))).toBe(0);
  });
});
