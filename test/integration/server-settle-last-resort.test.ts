import { BatchRecorder } from '../../src/batch/batch-recorder';
import { BatchStore } from '../../src/batch/batch-store';
import * as failurePlan from '../../src/server/retry/failure-plan';
import type { JobOutcome } from '../../src/server/server-middleware';
import { usePrivateRedis } from '../support/private-redis';
import { useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

const JID = 'dddddddddddddddddddddddd';
const RAW = JSON.stringify({
  class: 'FailJob',
  queue: 'default',
  jid: JID,
  retry: true,
  args: ['boom'],
  created_at: 1795933789.5,
  enqueued_at: 1795933789.5,
});

/**
 * Seed 004's last resort: a job that ran and failed, whose failure cannot be
 * planned (nor, therefore, its interrupt), is filed in dead from the bytes
 * as fetched: never left claimed to run again, never handed back.
 */
describe('settling when not even the interrupt can be planned', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const harness = useHarnesses(server);
  let unplannable = true;
  beforeEach(() => {
    unplannable = true;
    // The interrupt is planned from the bytes as fetched, which parsed once
    // already: only a fault of the planner itself reaches the last resort.
    const planInterrupt = failurePlan.planInterrupt;
    jest.spyOn(failurePlan, 'planInterrupt').mockImplementation((...args) => {
      if (unplannable) throw new SyntaxError('unplannable');
      return planInterrupt(...args);
    });
  });
  afterEach(() => jest.restoreAllMocks());

  async function run(
    raw = RAW,
    batches?: BatchRecorder,
  ): Promise<{ outcomes: JobOutcome[]; privateKey: string; stop(): Promise<void> }> {
    const outcomes: JobOutcome[] = [];
    const h = harness(
      [{ name: 'FailJob', instance: { perform: (message: string) => Promise.reject(new Error(message)) } }],
      { orphanCheckInterval: 1, batches },
    );
    // A middleware that leaves a member of the payload unparseable: planning the failure throws.
    h.manager.useMiddleware(async (context, next) => {
      context.job.setRaw('retry_count', '{not json');
      await next();
    });
    h.manager.addListener({ onSettled: (_context, outcome) => void outcomes.push(outcome) });
    await server.client().lpush('queue:default', raw);
    await h.manager.start();
    await waitFor(() => outcomes.length === 1, { what: 'the job to settle' });
    return {
      outcomes,
      privateKey: `queue:default|${h.identity.hostname}|${h.identity.pid}|${h.identity.nonce}|0`,
      stop: () => h.manager.stop(),
    };
  }

  it('files it in dead from the payload as fetched, with the error fields', async () => {
    const redis = server.client();
    const { outcomes, privateKey } = await run();
    expect(outcomes[0].kind).toBe('interrupted');
    const dead = await redis.zrange('dead', '0', '-1');
    expect(dead).toHaveLength(1);
    const entry = JSON.parse(dead[0]);
    expect(entry).toMatchObject({
      jid: JID,
      class: 'FailJob',
      args: ['boom'],
      error_class: 'Error',
      error_message: 'boom',
      failed_at: expect.any(Number),
    });
    expect(entry.retry_count).toBeUndefined();
    expect(await redis.llen(privateKey)).toBe(0);
    expect(await redis.llen('queue:default')).toBe(0);
  });

  it('tells the batch of the job of the death before filing it in dead, though its failure could not be planned', async () => {
    const store = new BatchStore(server.client());
    const hold = store.newHold();
    const bid = await store.open({ callbackQueue: 'callbacks', callbacks: [{ event: 'death', target: 'Ops' }] }, hold);
    await store.register(bid, JID);
    await store.settle(bid, 'close', hold);
    const { outcomes } = await run(JSON.stringify({ ...JSON.parse(RAW), bid }), new BatchRecorder(store));
    expect(outcomes[0].kind).toBe('interrupted');
    expect(await server.client().zcard('dead')).toBe(1);
    expect(await store.status(bid)).toMatchObject({ death: true, deadJids: [JID], jids: [] });
    const [callback] = await server.client().lrange('queue:callbacks', 0, -1);
    expect(JSON.parse(callback)).toMatchObject({ args: [bid, 'Ops', 'death', {}] });
  });

  it('with a planner that works, the interrupt is built from the payload as fetched (not the middleware-modified one) and filed in retry', async () => {
    unplannable = false;
    const redis = server.client();
    const { outcomes } = await run();
    expect(outcomes[0]).toMatchObject({ kind: 'interrupted', filedIn: 'retry' });
    const retry = await redis.zrange('retry', '0', '-1');
    expect(retry).toHaveLength(1);
    expect(JSON.parse(retry[0])).toMatchObject({
      jid: JID,
      args: ['boom'],
      retry_count: 0,
      interrupted_count: 1,
      error_message: 'boom',
    });
    expect(await redis.zcard('dead')).toBe(0);
  });

  it('remembers it for dead when dead cannot be written either, and files it once it can', async () => {
    const redis = server.client();
    await redis.set('dead', 'not a sorted set');
    const { privateKey, stop } = await run();
    expect(await redis.lrange(privateKey, 0, -1)).toEqual([RAW]);
    await redis.del('dead');
    await waitFor(async () => (await redis.zcard('dead')) === 1, {
      timeout: 15000,
      what: 'the remembered dead filing',
    });
    expect(JSON.parse((await redis.zrange('dead', '0', '-1'))[0])).toMatchObject({ jid: JID, error_message: 'boom' });
    await stop();
    expect(await redis.llen('queue:default')).toBe(0);
    expect(await redis.exists(privateKey)).toBe(0);
  });
});
