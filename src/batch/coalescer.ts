/** One caller waiting for a call: what it gives the call, and its promise's ends. */
interface Rider<I, O> {
  input: I;
  resolve(reply: O): void;
  reject(error: unknown): void;
}

/** The callers of one key (a batch): those waiting for the next call, and whether a call is on its way. */
interface Lane<I, O> {
  waiting: Array<Rider<I, O>>;
  busy: boolean;
}

/** The most inputs one call carries (Lua's `unpack` takes a few thousand; a long script holds Redis). */
export const MAX_PER_CALL = 500;

/**
 * Makes one Redis call of what many callers of one key (a batch) ask for together, and hands each the shared reply:
 * a caller's promise resolves only once a call that carried its input succeeded, and rejects with that call's
 * error, so each caller still hears of its own request as if it had made the call alone. The requests of one key
 * made in the same turn of the event loop, or while that key's previous call is on its way, go in one call (Nagle's
 * rule: no timer, and no wait when idle beyond the turn). Every call leaves after each request it carries was made,
 * so its reply is never older than a call of the caller's own. One call per key is on its way at a time; keys do not
 * wait for each other.
 */
export class Coalescer<I, O> {
  private readonly lanes = new Map<string, Lane<I, O>>();

  constructor(
    private readonly send: (key: string, inputs: I[]) => Promise<O>,
    private readonly maxPerCall = MAX_PER_CALL,
  ) {}

  /** Resolves to the reply of the call that carried `input`; rejects with that call's error. */
  request(key: string, input: I): Promise<O> {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { waiting: [], busy: false };
      this.lanes.set(key, lane);
    }
    const { waiting } = lane;
    const replied = new Promise<O>((resolve, reject) => waiting.push({ input, resolve, reject }));
    if (!lane.busy) {
      lane.busy = true;
      const drained = lane;
      // The rest of this turn's requests join before the first call leaves.
      setImmediate(() => void this.drain(key, drained));
    }
    return replied;
  }

  /** Sends the lane's waiting requests, a call at a time, until none is left; then forgets the lane. */
  private async drain(key: string, lane: Lane<I, O>): Promise<void> {
    while (lane.waiting.length > 0) {
      const riders = lane.waiting.splice(0, this.maxPerCall);
      let reply: O;
      try {
        reply = await this.send(
          key,
          riders.map((rider) => rider.input),
        );
      } catch (error) {
        for (const rider of riders) rider.reject(error);
        continue;
      }
      for (const rider of riders) rider.resolve(reply);
    }
    lane.busy = false;
    this.lanes.delete(key);
  }
}
