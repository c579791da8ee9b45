/**
 * An ordered chain of async middleware around one action, Rack style: each
 * entry gets the context and a `next` that runs the rest of the chain. An
 * entry that does not call `next` halts the chain, and the action never runs.
 */
export type MiddlewareFn<C> = (context: C, next: () => Promise<void>) => Promise<void> | void;

export class MiddlewareChain<C> {
  private readonly entries: MiddlewareFn<C>[] = [];

  /** Appends to the chain (runs after, i.e. inside, the existing entries). */
  use(entry: MiddlewareFn<C>): this {
    this.entries.push(entry);
    return this;
  }

  /** Prepends to the chain (runs before, i.e. around, the existing entries). */
  prepend(entry: MiddlewareFn<C>): this {
    this.entries.unshift(entry);
    return this;
  }

  get size(): number {
    return this.entries.length;
  }

  /**
   * Runs the chain around `action`; resolves to false when an entry halted it. Plain functions returning promises,
   * not async ones: each job (and each push) goes through here, and every async layer is one more promise and
   * resumption. What an entry, `next` or the action throws at once still comes out as a rejection.
   */
  run(context: C, action: () => Promise<void>): Promise<boolean> {
    const entries = this.entries;
    let ran = false;
    const dispatch = (index: number): Promise<void> => {
      try {
        if (index === entries.length) {
          ran = true;
          return Promise.resolve(action());
        }
        let called = false;
        return Promise.resolve(
          entries[index](context, () => {
            if (called) return Promise.reject(new Error('middleware called next() twice'));
            called = true;
            return dispatch(index + 1);
          }),
        );
      } catch (error) {
        return Promise.reject(error);
      }
    };
    return dispatch(0).then(() => ran);
  }
}
