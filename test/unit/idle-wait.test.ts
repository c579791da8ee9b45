import { IdleWait } from '../../src/server/fetch/idle-wait';

/** The idle pause of a fetcher with nothing to fetch from, cut short by wake(). */
describe('fetch: idle wait', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  async function settled(promise: Promise<void>): Promise<boolean> {
    let done = false;
    void promise.then(() => (done = true));
    await Promise.resolve();
    await Promise.resolve();
    return done;
  }

  it('lasts its time, to the millisecond', async () => {
    const idle = new IdleWait();
    const waiting = idle.wait(500);
    jest.advanceTimersByTime(499);
    expect(await settled(waiting)).toBe(false);
    jest.advanceTimersByTime(1);
    expect(await settled(waiting)).toBe(true);
  });

  it('says whether a wait is under way, until it lasts its time or is woken', async () => {
    const idle = new IdleWait();
    expect(idle.waiting).toBe(false);
    const timed = idle.wait(500);
    expect(idle.waiting).toBe(true);
    jest.advanceTimersByTime(500);
    await timed;
    expect(idle.waiting).toBe(false);
    const woken = idle.wait(500);
    idle.wake();
    await woken;
    expect(idle.waiting).toBe(false);
  });

  it('wake() ends it at once; a wake with nobody waiting is lost, not kept for the next wait', async () => {
    const idle = new IdleWait();
    idle.wake();
    const waiting = idle.wait(500);
    expect(await settled(waiting)).toBe(false);
    idle.wake();
    expect(await settled(waiting)).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('an earlier wait running out does not disarm the wake of a later one', async () => {
    const idle = new IdleWait();
    const short = idle.wait(100);
    const long = idle.wait(10_000);
    jest.advanceTimersByTime(100);
    expect(await settled(short)).toBe(true);
    idle.wake();
    expect(await settled(long)).toBe(true);
  });

  it('a wait ended by wake() leaves nothing armed: the next wake wakes nothing', async () => {
    const idle = new IdleWait();
    const first = idle.wait(100);
    idle.wake();
    await first;
    const second = idle.wait(1000);
    jest.advanceTimersByTime(999);
    expect(await settled(second)).toBe(false);
  });
});
