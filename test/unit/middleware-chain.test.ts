import { MiddlewareChain } from '../../src/job/middleware-chain';

describe('MiddlewareChain', () => {
  it('refuses a second next() from one entry, so a job never performs twice in one attempt', async () => {
    let performed = 0;
    const chain = new MiddlewareChain<object>().use(async (_context, next) => {
      await next();
      await next();
    });
    await expect(chain.run({}, async () => void performed++)).rejects.toThrow(
      new Error('middleware called next() twice'),
    );
    expect(performed).toBe(1);
  });

  it('runs appended entries inside the existing ones and prepended ones around them, each seeing the context', async () => {
    const trace: string[] = [];
    const entry = (name: string) => async (context: { id: number }, next: () => Promise<void>) => {
      trace.push(`${name}>${context.id}`);
      await next();
      trace.push(`<${name}`);
    };
    const chain = new MiddlewareChain<{ id: number }>().use(entry('b')).use(entry('c')).prepend(entry('a'));
    expect(chain.size).toBe(3);
    await expect(chain.run({ id: 7 }, async () => void trace.push('action'))).resolves.toBe(true);
    expect(trace).toEqual(['a>7', 'b>7', 'c>7', 'action', '<c', '<b', '<a']);
  });

  it('resolves to false and skips the action and the later entries when an entry does not call next()', async () => {
    const trace: string[] = [];
    const chain = new MiddlewareChain<object>()
      .use(async (_context, next) => {
        trace.push('outer');
        await next();
      })
      .use(() => void trace.push('halt'))
      .use(async (_context, next) => {
        trace.push('inner');
        await next();
      });
    await expect(chain.run({}, async () => void trace.push('action'))).resolves.toBe(false);
    expect(trace).toEqual(['outer', 'halt']);
  });

  it('runs the action of an empty chain and resolves to true', async () => {
    let performed = 0;
    const chain = new MiddlewareChain<object>();
    expect(chain.size).toBe(0);
    await expect(chain.run({}, async () => void performed++)).resolves.toBe(true);
    expect(performed).toBe(1);
  });

  it("passes the action's error out through every entry", async () => {
    const seen: unknown[] = [];
    const chain = new MiddlewareChain<object>().use(async (_context, next) => {
      try {
        await next();
      } catch (error) {
        seen.push(error);
        throw error;
      }
    });
    const failure = new Error('perform failed');
    await expect(chain.run({}, async () => Promise.reject(failure))).rejects.toBe(failure);
    expect(seen).toEqual([failure]);
  });

  it('turns what an entry, the action or a second next() throws at once into a rejection, never a throw', async () => {
    const failure = new Error('thrown at once');
    const throwing = new MiddlewareChain<object>().use(() => {
      throw failure;
    });
    let result: Promise<boolean> | undefined;
    expect(() => (result = throwing.run({}, async () => undefined))).not.toThrow();
    await expect(result).rejects.toBe(failure);

    const action = () => {
      throw failure;
    };
    await expect(new MiddlewareChain<object>().run({}, action)).rejects.toBe(failure);
    await expect(new MiddlewareChain<object>().use((_c, next) => next()).run({}, action)).rejects.toBe(failure);

    let second: Promise<void> | undefined;
    const twice = new MiddlewareChain<object>().use((_context, next) => {
      void next();
      second = next();
    });
    await expect(twice.run({}, async () => undefined)).resolves.toBe(true);
    await expect(second).rejects.toThrow('middleware called next() twice');
  });
});
