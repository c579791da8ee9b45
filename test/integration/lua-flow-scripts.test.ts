import { Client } from '../../src/client/client';
import { FlowStore } from '../../src/flow/flow-store';
import { createFlow } from '../../src/flow/flow-writer';
import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';

/**
 * lua/flow_create.lua, flow_advance.lua, flow_fail.lua and flow_abandon.lua pinned at the scripts: each step claimed
 * on the node's state (a callback run twice changes the flow once), siblings releasing their dependent exactly once,
 * an abandon claimed on the flow's state, and a straggler of a flow that is gone writing nothing.
 */
describe('lua/flow_*.lua', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;
  const store = () => new FlowStore(redis());
  const client = () => new Client(redis(), { timestamps: 'seconds' });
  const node = (name: string, dependsOn: string[] = [], extra: Record<string, unknown> = {}) => ({
    name,
    class: 'Job',
    args: [name],
    dependsOn,
    ...extra,
  });
  const queued = async () =>
    (await redis().lrange('queue:default', 0, -1)).map((text) => (JSON.parse(text) as { args: string[] }).args[0]);

  it('creates the whole graph at once: roots queued with their exact bytes, the rest waiting in empty batches', async () => {
    const flow = await createFlow(client(), store(), { nodes: [node('b', ['a']), node('a')] });
    expect(await queued()).toEqual(['a']);
    expect(await redis().hgetall(Keys.flow(flow.fid))).toMatchObject({ state: 'running', total: '2', pending: '2' });
    expect(await redis().ttl(Keys.flow(flow.fid))).toBeGreaterThan(29 * 24 * 3600);
    expect(await redis().hgetall(Keys.batch(flow.bids.b))).toMatchObject({ total: '0', pending: '0' });
    expect(await redis().smembers(Keys.batchJids(flow.bids.a))).toEqual([flow.jids.a]);
    expect(await redis().zscore(Keys.flows, flow.fid)).not.toBeNull();
    const stored = (await redis().hget(Keys.flowNode(flow.fid, 0), 'payload')) as string;
    expect(stored).not.toContain('enqueued_at');
    expect(JSON.parse(stored)).toMatchObject({ bid: flow.bids.b, jid: flow.jids.b });
  });

  it('trims the flows and batches indexes as batch creation does, whatever the expiry of the flow', async () => {
    const day = 24 * 3600;
    const now = Date.now() / 1000;
    for (const index of [Keys.flows, Keys.batches])
      await redis().zadd(index, String(now - 31 * day), 'OldEntry000001', String(now - 29 * day), 'NewEntry000001');
    const flow = await createFlow(client(), store(), { nodes: [node('b', ['a']), node('a')], expiresIn: 90 * day });
    expect((await redis().zrange(Keys.flows, '0', '-1')).sort()).toEqual(['NewEntry000001', flow.fid].sort());
    expect((await redis().zrange(Keys.batches, '0', '-1')).sort()).toEqual(
      ['NewEntry000001', flow.bids.a, flow.bids.b].sort(),
    );
  });

  it('advances once however often the callback runs, and releases a fan-in node exactly once', async () => {
    const flow = await createFlow(client(), store(), { nodes: [node('a'), node('b'), node('c', ['a', 'b'])] });
    await redis().del('queue:default');
    expect((await store().advance(flow.fid, 0)).released).toEqual([]);
    expect((await store().advance(flow.fid, 0)).claimed).toBe(false);
    const [first, second] = await Promise.all([store().advance(flow.fid, 1), store().advance(flow.fid, 1)]);
    expect([first.claimed, second.claimed].sort()).toEqual([false, true]);
    expect(await queued()).toEqual(['c']);
    const [released] = await redis().lrange('queue:default', 0, -1);
    // enqueued_at spliced in front; the rest is the stored bytes.
    expect(released).toMatch(/^\{"enqueued_at":\d+\.\d+,/);
    expect(await redis().hgetall(Keys.batch(flow.bids.c))).toMatchObject({ total: '1', pending: '1' });
    expect((await store().find(flow.fid)).pending).toBe(1);
    await store().advance(flow.fid, 2);
    expect(await store().find(flow.fid)).toMatchObject({ state: 'succeeded', pending: 0 });
  });

  it('records a death once; under fail the flow is failed until the node succeeds after all', async () => {
    const flow = await createFlow(client(), store(), { nodes: [node('a'), node('b', ['a'])] });
    expect((await store().fail(flow.fid, 0)).claimed).toBe(true);
    expect((await store().fail(flow.fid, 0)).claimed).toBe(false);
    expect(await store().find(flow.fid)).toMatchObject({ state: 'failed', deadNodes: [0] });
    await store().advance(flow.fid, 0);
    const status = await store().find(flow.fid);
    expect(status).toMatchObject({ state: 'running', deadNodes: [], failedAt: null });
    expect(status.nodes[1].state).toBe('enqueued');
  });

  it('abandons only a running or failed flow; a failed one keeps failed_at, and its callbacks then change nothing', async () => {
    const flow = await createFlow(client(), store(), { nodes: [node('a'), node('b', ['a']), node('c', ['a'])] });
    await store().fail(flow.fid, 0);
    // The dead node's batch is listed among the dead batches (batch_settle.lua lists it when its job dies).
    await redis().zadd(Keys.deadBatches, String(Date.now() / 1000), flow.bids.a);
    expect(await store().abandon(flow.fid)).toBe(true);
    const header = await redis().hgetall(Keys.flow(flow.fid));
    expect(header).toMatchObject({
      state: 'abandoned',
      failed_at: expect.any(String),
      abandoned_at: expect.any(String),
    });
    expect(await redis().exists(Keys.flowDead(flow.fid), Keys.flowNode(flow.fid, 1), Keys.batch(flow.bids.a))).toBe(0);
    expect(await redis().zscore(Keys.batches, flow.bids.a)).toBeNull();
    expect(await redis().zscore(Keys.deadBatches, flow.bids.a)).toBeNull();
    await redis().del('queue:default');
    // The dead job retried to success, and a callback replayed: nothing is released, nothing rebuilt.
    expect(await store().advance(flow.fid, 0)).toMatchObject({ claimed: false, released: [] });
    expect(await store().fail(flow.fid, 1)).toMatchObject({ claimed: false });
    expect(await redis().llen('queue:default')).toBe(0);
    expect(await redis().keys(`flow:${flow.fid}:*`)).toEqual([]);

    const done = await createFlow(client(), store(), { nodes: [node('only')] });
    await store().advance(done.fid, 0);
    expect(await store().abandon(done.fid)).toBe(false);
    expect(await redis().hget(Keys.flow(done.fid), 'state')).toBe('succeeded');
    expect(await redis().exists(Keys.flowNode(done.fid, 0))).toBe(1);
    await expect(store().abandon('GoneFlow000000')).rejects.toThrow('no flow');
  });

  it('a straggler of a flow that is gone writes nothing', async () => {
    expect(await store().advance('GoneFlow000000', 0)).toMatchObject({ claimed: false, released: [] });
    expect(await store().fail('GoneFlow000000', 0)).toMatchObject({ claimed: false });
    expect(await redis().keys('*')).toEqual([]);
  });
});
