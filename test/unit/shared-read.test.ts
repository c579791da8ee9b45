import { SharedRead } from '../../src/api/shared-read';

/** A read whose every call is counted and resolved (or rejected) by the test. */
function controlledRead() {
  const pending: Array<{ resolve: (value: number) => void; reject: (error: Error) => void }> = [];
  const read = () => new Promise<number>((resolve, reject) => pending.push({ resolve, reject }));
  return { read, pending };
}

describe('SharedRead: one read for every caller within its window', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => (clock = 0));

  it('gives callers that ask while a read runs that same read', async () => {
    const { read, pending } = controlledRead();
    const shared = new SharedRead(read, 1000, now);
    const answers = Promise.all([shared.get(), shared.get(), shared.get()]);
    expect(pending).toHaveLength(1);
    pending[0].resolve(7);
    expect(await answers).toEqual([7, 7, 7]);
  });

  it('answers from the last read until freshMs after it resolved, then reads again', async () => {
    const { read, pending } = controlledRead();
    const shared = new SharedRead(read, 1000, now);
    const first = shared.get();
    clock = 500; // still running at 500: the window starts when it resolves
    pending[0].resolve(1);
    await first;
    clock = 1499;
    expect(await shared.get()).toBe(1);
    expect(pending).toHaveLength(1);
    clock = 1500;
    const second = shared.get();
    expect(pending).toHaveLength(2);
    pending[1].resolve(2);
    expect(await second).toBe(2);
  });

  it('keeps no failed read: the next caller reads again', async () => {
    const { read, pending } = controlledRead();
    const shared = new SharedRead(read, 1000, now);
    const failing = shared.get();
    pending[0].reject(new Error('Redis is unreachable'));
    await expect(failing).rejects.toThrow('Redis is unreachable');
    const retried = shared.get();
    expect(pending).toHaveLength(2);
    pending[1].resolve(3);
    expect(await retried).toBe(3);
  });
});
