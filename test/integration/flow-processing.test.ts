import { DeadSet } from '../../src/admin/dead-set';
import type { FlowDefinition, FlowFailurePolicy } from '../../src/flow/flow-definition';
import { FlowStore } from '../../src/flow/flow-store';
import { createFlow } from '../../src/flow/flow-writer';
import { Keys } from '../../src/redis/keys';
import { batchOutcomes, runFlowCallbacks } from '../support/flow-harness';
import { usePrivateRedis } from '../support/private-redis';
import { Harness, useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

/** Flows run by real managers over a real redis-server: nodes released through their batches' callbacks. */
describe('flows through the settle path', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);
  const redis = () => server.client();
  const store = () => new FlowStore(redis());

  /** A process that runs FlowJob with `perform` and advances flows. */
  function process(perform: (name: string) => unknown, concurrency = 10): Harness {
    const h = harness([{ name: 'FlowJob', instance: { perform, retryIn: () => 0 } as never, options: { retry: 0 } }], {
      concurrency,
      batches: batchOutcomes(redis()),
      queues: ['default'],
    });
    runFlowCallbacks(h.registry, redis());
    return h;
  }

  const node = (name: string, dependsOn: string[] = [], extra: Record<string, unknown> = {}) => ({
    name,
    class: 'FlowJob',
    args: [name],
    dependsOn,
    ...extra,
  });

  it('1 -> 100 -> 1: each node runs once, after all its dependencies; the flow succeeds', async () => {
    const ran: string[] = [];
    const h = process((name) => void ran.push(name), 20);
    const middle = Array.from({ length: 100 }, (_, n) => node(`page-${n}`, ['split']));
    const definition: FlowDefinition = {
      nodes: [
        node(
          'merge',
          middle.map((m) => m.name),
        ),
        node('split'),
        ...middle,
      ],
    };
    const flow = await createFlow(h.client, store(), definition);
    await h.manager.start();
    await waitFor(async () => (await store().find(flow.fid)).state === 'succeeded', {
      timeout: 60000,
      what: 'the flow',
    });
    expect(ran).toHaveLength(102);
    expect(new Set(ran).size).toBe(102);
    expect(ran[0]).toBe('split');
    expect(ran[101]).toBe('merge');
    const status = await store().find(flow.fid);
    expect(status).toMatchObject({ total: 102, pending: 0, succeeded: 102, depth: 3, width: 100, deadNodes: [] });
    expect(status.nodes.every((n) => n.state === 'succeeded')).toBe(true);
    expect(status.nodes[0]).toMatchObject({ name: 'merge', remaining: 0, jid: flow.jids.merge });
  }, 90000);

  /** a dies (retry 0) under `policy`; b succeeds once c has run or after a died; c depends on both. */
  async function diamond(policy: FlowFailurePolicy, gateOnC: boolean) {
    const ran: string[] = [];
    let revived = false;
    let releaseB: () => void = () => undefined;
    const cRan = new Promise<void>((resolve) => (releaseB = resolve));
    const h = process(async (name) => {
      if (name === 'a' && !revived) throw new Error('a fails');
      if (name === 'b' && gateOnC) await cRan;
      ran.push(name);
      if (name === 'c') releaseB();
    });
    const flow = await createFlow(h.client, store(), {
      nodes: [node('a', [], { onFailure: policy, retry: 0 }), node('b'), node('c', ['a', 'b'])],
    });
    await h.manager.start();
    return { h, ran, flow, revive: () => (revived = true) };
  }

  it('fail: the dependent never runs, the flow reads failed; retrying the dead job resumes it', async () => {
    const { ran, flow, revive } = await diamond('fail', false);
    await waitFor(async () => (await store().find(flow.fid)).state === 'failed', { what: 'failed' });
    await waitFor(() => ran.includes('b'), { what: 'b' });
    let status = await store().find(flow.fid);
    expect(status.deadNodes).toEqual([0]);
    expect(status.nodes.map((n) => n.state)).toEqual(['dead', 'succeeded', 'waiting']);
    expect(status.nodes[2].remaining).toBe(1);
    expect(ran).not.toContain('c');
    revive();
    const dead = new DeadSet(redis(), { timestamps: 'seconds', dead: { maxJobs: 100, timeout: 1e7 } });
    expect(await dead.runAllNow()).toBe(1);
    await waitFor(async () => (await store().find(flow.fid)).state === 'succeeded', { what: 'resumed' });
    status = await store().find(flow.fid);
    expect(status.deadNodes).toEqual([]);
    expect(status.failedAt).toBeNull();
    expect(ran.filter((name) => name === 'c')).toHaveLength(1);
  }, 60000);

  it('ignore: the death counts as met; the dependent runs after its other dependency, and the flow succeeds', async () => {
    const { ran, flow } = await diamond('ignore', false);
    await waitFor(async () => (await store().find(flow.fid)).state === 'succeeded', { what: 'succeeded' });
    expect(ran.indexOf('c')).toBeGreaterThan(ran.indexOf('b'));
    const status = await store().find(flow.fid);
    expect(status.nodes.map((n) => [n.state, n.onFailure])).toEqual([
      ['ignored', 'ignore'],
      ['succeeded', 'fail'],
      ['succeeded', 'fail'],
    ]);
    expect(status.deadNodes).toEqual([]);
  }, 60000);

  it('continue: the dependent runs at once, before its other dependency finished', async () => {
    // b waits until c has run: under any other policy this flow would never finish.
    const { ran, flow } = await diamond('continue', true);
    await waitFor(async () => (await store().find(flow.fid)).state === 'succeeded', { what: 'succeeded' });
    expect(ran).toEqual(['c', 'b']);
    const status = await store().find(flow.fid);
    expect(status.nodes.map((n) => n.state)).toEqual(['ignored', 'succeeded', 'succeeded']);
    expect(status.pending).toBe(0);
    // Released early, its count can never reach zero again (a Ruby process releases on the count alone).
    expect(status.nodes[2].remaining).toBeLessThan(0);
  }, 60000);

  it('a process dying between a parent success and its child enqueue strands nothing', async () => {
    const ran: string[] = [];
    const h = process((name) => void ran.push(name));
    const flow = await createFlow(h.client, store(), {
      nodes: [node('parent'), node('child', ['parent']), node('other'), node('after-other', ['other'])],
    });
    // The dead process fetched both roots; it told parent's batch of its success (which queued the advance callback
    // job) and fetched that callback too, then died before acknowledging anything. `other` it never finished.
    const [parentJob, otherJob] = await Promise.all(
      ['parent', 'other'].map(async (name) => {
        const all = await redis().lrange('queue:default', 0, -1);
        return all.find((text) => (JSON.parse(text) as { args: string[] }).args[0] === name) as string;
      }),
    );
    await redis().del('queue:default');
    await batchOutcomes(redis()).record((await import('../../src/job/payload')).JobPayload.parse(parentJob), 'success');
    const callback = (await redis().rpop('queue:default')) as string;
    expect(JSON.parse(callback)).toMatchObject({
      class: 'Wurk::Batch::CallbackJob',
      args: [flow.bids.parent, 'Wurk::Flow::Completion', 'success', { fid: flow.fid, node: 0 }],
    });
    const list = 'queue:default|other-host|4242|0123456789ab|0';
    await redis().lpush(list, parentJob, otherJob, callback);
    await redis().hset('wurk:last_beat', 'other-host:4242:0123456789ab', String(Date.now() / 1000 - 600));
    expect((await store().find(flow.fid)).nodes[1].state).toBe('waiting');

    await h.manager.start();
    await waitFor(async () => (await store().find(flow.fid)).state === 'succeeded', {
      timeout: 30000,
      what: 'the flow',
    });
    // parent ran again (its re-run counts once), child and after-other once each.
    expect(ran.filter((name) => name === 'child')).toHaveLength(1);
    expect(ran.filter((name) => name === 'after-other')).toHaveLength(1);
    expect(await redis().hgetall(Keys.batch(flow.bids.parent))).toMatchObject({ total: '1', pending: '0' });
    expect(await redis().llen(list)).toBe(0);
  }, 60000);
});
