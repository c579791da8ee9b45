/**
 * Polls `probe` until it returns a truthy value or the deadline passes.
 * Tests synchronize on observable state with this, never on fixed sleeps.
 */
export async function waitFor<T>(
  probe: () => Promise<T> | T,
  { timeout = 10000, interval = 10, what = 'condition' } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeout;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value as NonNullable<T>;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${String(last)})`);
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
