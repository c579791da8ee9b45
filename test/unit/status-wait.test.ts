import { toStatusRecord, type StatusRecord, type StatusState } from '../../src/status/status-record';
import { StatusWaitTimeoutError, waitForStatus } from '../../src/status/status-wait';

/**
 * waitForStatus against a scripted read, on Jest's fake clock: the poll
 * schedule and the deadline are exact, and no test waits in real time.
 */
describe('waitForStatus', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_786_000_000_000 }));
  afterEach(() => jest.useRealTimers());

  const row = (state: StatusState): StatusRecord => toStatusRecord('j1', { state });

  /** A read that answers `states` in turn (the last one for ever after), noting the clock of each call. */
  function scriptedRead(...states: Array<StatusState | null>) {
    const start = Date.now();
    const at: number[] = [];
    const read = async () => {
      at.push(Date.now() - start);
      const state = states[Math.min(at.length - 1, states.length - 1)];
      return state === null ? null : row(state);
    };
    return { read, at };
  }

  /** Runs the wait to its end on the fake clock; the rejection, if any, comes back as the value. */
  async function settle<T>(waiting: Promise<T>, ms: number): Promise<T | StatusWaitTimeoutError> {
    const outcome = waiting.catch((error: StatusWaitTimeoutError) => error);
    await jest.advanceTimersByTimeAsync(ms);
    return outcome;
  }

  it('polls after 50 ms, twice as long each time up to once a second, and gives up exactly at the timeout', async () => {
    const { read, at } = scriptedRead('running');
    const error = await settle(waitForStatus(read, 'j1', { timeout: 5000 }), 6000);
    expect(at).toEqual([0, 50, 150, 350, 750, 1550, 2550, 3550, 4550, 5000]);
    expect(error).toBeInstanceOf(StatusWaitTimeoutError);
    expect(error).toMatchObject({
      jid: 'j1',
      timeout: 5000,
      last: { state: 'running' },
      message: 'job j1 did not finish within 5000 ms (last state: running)',
    });
  });

  it('says so when there was never a row to read', async () => {
    const { read } = scriptedRead(null);
    const error = await settle(waitForStatus(read, 'gone', { timeout: 100 }), 200);
    expect(error).toBeInstanceOf(StatusWaitTimeoutError);
    expect(error).toMatchObject({
      last: null,
      message: 'job gone did not finish within 100 ms (last state: no status row)',
    });
  });

  it.each(['complete', 'failed', 'dead'] as StatusState[])('ends by default at the first %s row', async (final) => {
    const { read, at } = scriptedRead('enqueued', 'running', final);
    await expect(settle(waitForStatus(read, 'j1', { timeout: 1000 }), 2000)).resolves.toMatchObject({ state: final });
    expect(at).toEqual([0, 50, 150]);
  });

  it.each(['enqueued', 'running', 'retrying', 'interrupted'] as StatusState[])(
    'keeps waiting by default through %s: the job runs again',
    async (state) => {
      const { read } = scriptedRead(state);
      await expect(settle(waitForStatus(read, 'j1', { timeout: 1000 }), 2000)).resolves.toBeInstanceOf(
        StatusWaitTimeoutError,
      );
    },
  );

  it('ends at the states given in `until` instead', async () => {
    const { read } = scriptedRead('enqueued', 'running', 'complete');
    await expect(settle(waitForStatus(read, 'j1', { timeout: 1000, until: ['running'] }), 2000)).resolves.toMatchObject(
      { state: 'running' },
    );
  });
});
