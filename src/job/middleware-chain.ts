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

  /** Runs the chain around `action`; resolves to false when an entry halted it. */
  async run(context: C, action: () => Promise<void>): Promise<boolean> {
    let ran = false;
    const dispatch = async (index: number): Promise<void> => {
      if (index === this.entries.length) {
        ran = true;
        await action();
        return;
      }
      let called = false;
      await this.entries[index](context, async () => {
        if (called) throw new Error('middleware called next() twice');
        called = true;
        await dispatch(index + 1);
      });
    };
    if (this.entries.length === 0) {
      await action();
      return true;
    }
    await dispatch(0);
    return ran;
  }
}
