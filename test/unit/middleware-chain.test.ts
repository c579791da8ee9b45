import { MiddlewareChain } from '../../src/job/middleware-chain';

describe('MiddlewareChain', () => {
  it('refuses a second next() from one entry, so a job never performs twice in one attempt', async () => {
    let performed = 0;
    const chain = new MiddlewareChain<object>().use(async (_context, next) => {
      await next();
      await next();
    });
    await expect(chain.run({}, async () => void performed++)).rejects.toThrow('middleware called next() twice');
    expect(performed).toBe(1);
  });
});
