import { Worker } from '../../src';
import { FlowCycleError, FlowService, UnknownFlowDependencyError, type FlowNode } from '../../src/entries/flows';
import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';
import { ADMIN_TOKEN, ApiApp, call, post, READ_TOKEN, startApiApp, TOKENS } from './api-app';

const ran: string[] = [];

@Worker({ name: 'FlowStep', queue: 'flow-e2e' })
class FlowStep {
  perform(step: string): void {
    ran.push(step);
  }
}

/** Held until the test opens the gate: its flow is abandoned while it runs. */
let openGate: () => void = () => undefined;
const gate = new Promise<void>((resolve) => (openGate = resolve));

@Worker({ name: 'GatedStep', queue: 'flow-e2e' })
class GatedStep {
  async perform(step: string): Promise<void> {
    ran.push(`${step}:started`);
    await gate;
    ran.push(step);
  }
}

type Redis = ReturnType<ReturnType<typeof usePrivateRedis>['client']>;

/**
 * A two-node flow as a Ruby process with Wurk writes it (lib/wurk/lua/flow_create.lua; docs/flows.md, "Redis layout"):
 * the root already queued, the child waiting with its payload stored.
 */
async function writeRubyFlow(redis: Redis, fid: string): Promise<void> {
  const job = (step: string, jid: string, bid: string) =>
    `{"class":"FlowStep","args":["${step}"],"retry":true,"queue":"flow-e2e","jid":"${jid}","created_at":1790000000.5,"bid":"${bid}"}`;
  await redis.hset(Keys.flow(fid), {
    created_at: '1790000000.5',
    state: 'running',
    total: '2',
    pending: '2',
    depth: '2',
    width: '1',
    expiry: '2592000',
  });
  const nodes = [
    { index: '0', name: 'fetch', jid: 'rubyflowjid0000000000a0', bid: 'RubyNodeBid0A0', deps: '[]', dependents: '[1]' },
    { index: '1', name: '', jid: 'rubyflowjid0000000000a1', bid: 'RubyNodeBid0A1', deps: '[0]', dependents: '[]' },
  ];
  for (const node of nodes) {
    const root = node.index === '0';
    const callbacks = JSON.stringify([['success', 'Wurk::Flow::Completion', { fid, node: Number(node.index) }]]);
    await redis.hset(Keys.flowNode(fid, Number(node.index)), {
      ...node,
      class: 'FlowStep',
      queue: 'flow-e2e',
      state: root ? 'enqueued' : 'waiting',
      remaining: root ? '0' : '1',
      payload: job(`ruby-${node.index}`, node.jid, node.bid),
    });
    await redis.hset(Keys.batch(node.bid), {
      created_at: '1790000000.5',
      description: `FlowStep[#${node.index}]`,
      callback_queue: 'flow-e2e',
      callback_class: '',
      parent_bid: '',
      tags: '[]',
      linger: '',
      callbacks,
      total: root ? '1' : '0',
      pending: root ? '1' : '0',
      failures: '0',
    });
  }
  await redis.sadd(Keys.batchJids('RubyNodeBid0A0'), 'rubyflowjid0000000000a0');
  await redis.lpush('queue:flow-e2e', job('ruby-0', 'rubyflowjid0000000000a0', 'RubyNodeBid0A0'));
  await redis.zadd(Keys.flows, '1790000000.5', fid);
}

describe('flows over HTTP and through FlowService, run by a wurk process', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let api: ApiApp;

  beforeAll(async () => {
    api = await startApiApp(server.url, { tokens: TOKENS }, { processing: true, queues: ['flow-e2e'] } as never, {
      providers: [FlowStep, GatedStep],
    });
  });
  afterAll(() => api.close());
  beforeEach(() => void ran.splice(0));

  const get = (fid: string) => call(api.port, { path: `/api/v1/flows/${fid}`, token: READ_TOKEN });

  it('runs a diamond through FlowService, and GET /v1/flows/:fid reads it in the documented shape', async () => {
    const nodes: FlowNode[] = [
      { name: 'merge', class: 'FlowStep', args: ['merge'], dependsOn: ['left', 'right'] },
      { name: 'fetch', class: 'FlowStep', args: ['fetch'] },
      { name: 'left', class: 'FlowStep', args: ['left'], dependsOn: ['fetch'] },
      { name: 'right', class: 'FlowStep', args: ['right'], dependsOn: ['fetch'], onFailure: 'ignore' },
    ];
    const flow = await api.app.get(FlowService).create({ nodes, callbackQueue: 'flow-e2e' });
    expect(flow.fid).toMatch(/^[A-Za-z0-9_-]{14}$/);
    expect(Object.keys(flow.jids).sort()).toEqual(['fetch', 'left', 'merge', 'right']);
    await waitFor(async () => (await get(flow.fid)).json.state === 'succeeded', { timeout: 20000, what: 'the flow' });
    expect(ran[0]).toBe('fetch');
    expect(ran[3]).toBe('merge');
    const res = await get(flow.fid);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      fid: flow.fid,
      state: 'succeeded',
      total: 4,
      pending: 0,
      succeeded: 4,
      depth: 3,
      width: 2,
      created_at: expect.any(Number),
      finished_at: expect.any(Number),
      failed_at: null,
      abandoned_at: null,
      dead_nodes: [],
    });
    expect(res.json.nodes[0]).toEqual({
      index: 0,
      name: 'merge',
      class: 'FlowStep',
      queue: 'flow-e2e',
      jid: flow.jids.merge,
      bid: flow.bids.merge,
      state: 'succeeded',
      depends_on: [2, 3],
      dependents: [],
      remaining: 0,
      on_failure: 'fail',
      piped: false,
      error: null,
    });
    expect(res.json.nodes[3].on_failure).toBe('ignore');
    expect(await server.redis.hget(Keys.flowNode(flow.fid, 0), 'payload')).toContain('"args":["merge"]');
  });

  it('reads and advances a flow a Ruby process wrote', async () => {
    await writeRubyFlow(server.redis, 'RubyFlow000001');
    await waitFor(async () => (await get('RubyFlow000001')).json.state === 'succeeded', {
      timeout: 20000,
      what: 'the Ruby flow',
    });
    expect(ran).toEqual(['ruby-0', 'ruby-1']);
    const res = await get('RubyFlow000001');
    expect(res.json).toMatchObject({ total: 2, pending: 0, created_at: 1790000000.5 });
    expect(res.json.nodes.map((node: { name: string | null; state: string }) => [node.name, node.state])).toEqual([
      ['fetch', 'succeeded'],
      [null, 'succeeded'],
    ]);
  });

  it('an unknown fid is a 404 flow_not_found problem naming it; a malformed one a 400', async () => {
    const missing = await get('NoSuchFlow0000');
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ type: expect.stringContaining('flow_not_found'), fid: 'NoSuchFlow0000' });
    expect((await get('bad.fid')).status).toBe(400);
  });

  it('refuses a cycle and an unknown dependency with typed errors naming the node, writing nothing', async () => {
    const flows = api.app.get(FlowService);
    const step = (name: string, dependsOn: string[]) => ({ name, class: 'FlowStep', args: [name], dependsOn });
    const cycle = flows.create({ nodes: [step('a', ['c']), step('b', ['a']), step('c', ['b'])] });
    await expect(cycle).rejects.toBeInstanceOf(FlowCycleError);
    await expect(cycle).rejects.toMatchObject({ node: 'a', cycle: ['a', 'c', 'b', 'a'] });
    const unknown = flows.create({ nodes: [step('a', []), step('b', ['nope'])] });
    await expect(unknown).rejects.toBeInstanceOf(UnknownFlowDependencyError);
    await expect(unknown).rejects.toMatchObject({ node: 'b', dependency: 'nope' });
    expect(await server.redis.keys('flow:*')).toEqual([]);
    expect(await server.redis.llen('queue:flow-e2e')).toBe(0);
  });

  it('POST /v1/flows/:fid/abandon (admin): no node is released again, its keys go, the record reads abandoned', async () => {
    const flow = await api.app.get(FlowService).create({
      nodes: [
        { name: 'first', class: 'GatedStep', args: ['first'] },
        { name: 'second', class: 'FlowStep', args: ['second'], dependsOn: ['first'] },
      ],
      callbackQueue: 'flow-e2e',
    });
    await waitFor(() => ran.includes('first:started'), { timeout: 20000, what: 'the first node running' });
    const abandon = (fid: string, token = ADMIN_TOKEN) => post(api.port, `/api/v1/flows/${fid}/abandon`, token, {});
    expect((await abandon(flow.fid, READ_TOKEN)).status).toBe(403);
    const res = await abandon(flow.fid);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ fid: flow.fid, abandoned: true, state: 'abandoned' });
    expect(await server.redis.keys(`flow:${flow.fid}:*`)).toEqual([]);
    expect(await server.redis.exists(Keys.batch(flow.bids.second), Keys.batch(flow.bids.first))).toBe(0);
    expect(await server.redis.zscore(Keys.batches, flow.bids.second)).toBeNull();
    // The job already running is not chased: it finishes, and its success advances nothing.
    openGate();
    await waitFor(() => ran.includes('first'), { timeout: 20000, what: 'the running node finished' });
    await waitFor(async () => (await server.redis.llen('queue:flow-e2e')) === 0, { what: 'no callback left' });
    expect(ran).not.toContain('second');
    expect(await server.redis.keys(`flow:${flow.fid}:*`)).toEqual([]);
    const read = await get(flow.fid);
    expect(read.json).toMatchObject({ state: 'abandoned', abandoned_at: expect.any(Number), nodes: [] });
    expect(await server.redis.ttl(Keys.flow(flow.fid))).toBeGreaterThan(0);
    expect((await abandon(flow.fid)).json).toEqual({ fid: flow.fid, abandoned: false, state: 'abandoned' });
    expect(await api.app.get(FlowService).abandon(flow.fid)).toBe(false);
    expect((await abandon('NoSuchFlow0000')).status).toBe(404);
  });
});
