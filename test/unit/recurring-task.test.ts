import { RecurringTask } from '../../src/server/recurring-task';
import { recordingLogger } from '../support/recording-logger';

const unreachable = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });

/**
 * The loops that talk to Redis (poller, orphan check, ...): they never die and never spin, and a failing
 * streak is logged once, then at most once a minute, and its end once. Driven by Jest's fake clock.
 */
describe('RecurringTask', () => {
  beforeEach(() => jest.useFakeTimers({ now: Date.UTC(2026, 10, 30, 12) }));
  afterEach(() => jest.useRealTimers());

  it('runs after the first delay, then every delay(), and not after stop()', async () => {
    let runs = 0;
    const task = new RecurringTask(
      'poll',
      async () => void runs++,
      () => 1000,
      recordingLogger(),
    );
    task.start(50);
    await jest.advanceTimersByTimeAsync(49);
    expect(runs).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(runs).toBe(1);
    await jest.advanceTimersByTimeAsync(1000);
    expect(runs).toBe(2);
    await task.stop();
    await jest.advanceTimersByTimeAsync(5000);
    expect(runs).toBe(2);
  });

  it('carries on after a failing run, and stop() waits for the run under way', async () => {
    let runs = 0;
    let finish!: () => void;
    const task = new RecurringTask(
      'poll',
      async () => {
        runs++;
        if (runs === 1) throw new Error('WRONGTYPE');
        await new Promise<void>((resolve) => (finish = resolve));
      },
      () => 100,
      recordingLogger(),
    );
    task.start();
    await jest.advanceTimersByTimeAsync(100);
    expect(runs).toBe(2);
    let stopped = false;
    const stopping = task.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    finish();
    await stopping;
    expect(stopped).toBe(true);
    // The run that was under way at stop() schedules no other.
    await jest.advanceTimersByTimeAsync(1000);
    expect(runs).toBe(2);
  });

  it('logs a failing streak at its start, then at most once a minute, and its end once', async () => {
    const logger = recordingLogger();
    const { lines } = logger;
    let failing = true;
    const task = new RecurringTask(
      'orphan check',
      async () => {
        if (failing) throw new Error('WRONGTYPE Operation against a key holding the wrong kind of value');
      },
      () => 1000,
      logger,
    );
    expect(await task.runNow()).toBe(false);
    expect(lines).toEqual([
      'error orphan check failed (will retry): WRONGTYPE Operation against a key holding the wrong kind of value',
    ]);
    jest.setSystemTime(Date.now() + 60000);
    expect(await task.runNow()).toBe(false);
    expect(lines).toHaveLength(1);
    jest.setSystemTime(Date.now() + 1);
    await task.runNow();
    expect(lines).toHaveLength(2);
    failing = false;
    expect(await task.runNow()).toBe(true);
    expect(await task.runNow()).toBe(true);
    expect(lines).toEqual([lines[0], lines[0], 'log orphan check recovered']);
    // A new streak is logged at its start again, however soon after the last line.
    failing = true;
    await task.runNow();
    expect(lines).toHaveLength(4);
  });

  it('leaves Redis being away to the connection watch: no line, no streak, no "recovered"', async () => {
    const logger = recordingLogger();
    const { lines } = logger;
    let away = true;
    const task = new RecurringTask(
      'poll',
      async () => {
        if (away) throw unreachable;
      },
      () => 1000,
      logger,
    );
    expect(await task.runNow()).toBe(false);
    away = false;
    expect(await task.runNow()).toBe(true);
    expect(lines).toEqual([]);
  });
});
