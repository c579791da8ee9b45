import { Backoff } from '../../src/periodic/backoff';

/** The per-entry pause after failures, on a clock the test moves. */
describe('periodic backoff', () => {
  let now = 1000;
  const backoff = () => new Backoff(2, 10, () => now);
  beforeEach(() => (now = 1000));

  it('doubles from the base per failure and stops at the maximum', () => {
    const pause = backoff();
    expect([1, 2, 3, 4, 5].map(() => pause.fail('entry'))).toEqual([2, 4, 8, 10, 10]);
  });

  it('keeps a key waiting until its pause has passed, to the millisecond', () => {
    const pause = backoff();
    expect(pause.waiting('entry')).toBe(false);
    pause.fail('entry');
    now = 2999;
    expect(pause.waiting('entry')).toBe(true);
    now = 3000;
    expect(pause.waiting('entry')).toBe(false);
  });

  it('counts failures per key: one failing entry does not pause another', () => {
    const pause = backoff();
    pause.fail('a');
    pause.fail('a');
    expect(pause.waiting('b')).toBe(false);
    expect(pause.fail('b')).toBe(2);
  });

  it('a success clears both the wait and the count', () => {
    const pause = backoff();
    pause.fail('entry');
    pause.fail('entry');
    pause.clear('entry');
    expect(pause.waiting('entry')).toBe(false);
    expect(pause.fail('entry')).toBe(2);
  });

  it('reads the monotonic clock by default', () => {
    const spy = jest.spyOn(performance, 'now').mockReturnValue(50_000);
    try {
      const pause = new Backoff(1, 60);
      pause.fail('entry');
      spy.mockReturnValue(50_999);
      expect(pause.waiting('entry')).toBe(true);
      spy.mockReturnValue(51_000);
      expect(pause.waiting('entry')).toBe(false);
    } finally {
      spy.mockRestore();
    }
  });
});
