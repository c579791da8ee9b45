import { randomBytes } from 'node:crypto';
import type { Client } from '../client/client';
import type { JobHash } from '../job/job-hash';
import type { JobPayload } from '../job/payload';
import { timestampText, nowMs } from '../job/time';
import { InvalidFlowError } from './errors';
import { newFid } from './fid';
import type { FlowDefinition, FlowNode } from './flow-definition';
import { buildGraph, failurePolicyOf, FlowGraph } from './flow-graph';
import { FLOW_COMPLETION_CLASS, FLOW_POLICY_CLASS } from './flow-completion';
import { FLOW_EXPIRY_SECONDS, FlowNodeEnvelope, FlowStore } from './flow-store';

/** A created flow: its id and, by node name, each node's jid and bid. */
export interface CreatedFlow {
  fid: string;
  jids: Record<string, string>;
  bids: Record<string, string>;
}

/**
 * Creates a flow in two phases (Ruby Wurk's `Flow::Creation`): every node's payload is built first, through the same
 * normalization and client middleware as a push, while nothing is in Redis; then the whole graph is written and its
 * roots queued in one script. A refusal in the first phase leaves nothing behind.
 */
export async function createFlow(client: Client, store: FlowStore, definition: FlowDefinition): Promise<CreatedFlow> {
  const graph = buildGraph(definition);
  const expiresIn = definition.expiresIn ?? FLOW_EXPIRY_SECONDS;
  if (!Number.isInteger(expiresIn) || expiresIn <= 0)
    throw new InvalidFlowError('expiresIn', 'must be a positive whole number of seconds');
  const fid = newFid();
  const built = await buildPayloads(client, graph);
  const payloads = built.map((node) => node.payload);
  const envelopes = graph.order.map((index) => envelope(fid, graph, index, built[index], client.timestampMode));
  await store.create(
    { fid, depth: graph.depth, width: graph.width, callbackQueue: definition.callbackQueue ?? 'default', expiresIn },
    envelopes,
  );
  const byName = (field: 'jid' | 'bid') =>
    Object.fromEntries(graph.nodes.map((node, index) => [node.name, payloads[index].get<string>(field) as string]));
  return { fid, jids: byName('jid'), bids: byName('bid') };
}

/** A node's job as built, and the sentinel its stored payload carries in place of its piped argument. */
interface BuiltNode {
  payload: JobPayload;
  sentinel?: string;
}

async function buildPayloads(client: Client, graph: FlowGraph): Promise<BuiltNode[]> {
  const built: BuiltNode[] = [];
  const feedsPipe = new Set(graph.pipes.filter((source) => source !== undefined));
  for (const [index, node] of graph.nodes.entries()) {
    const sentinel = graph.pipes[index] === undefined ? undefined : newPipeSentinel();
    const job = jobOf(node, sentinel);
    // The source's status row is where the piped result is read from, and tracking is opt-in per job.
    if (feedsPipe.has(index)) job.track = true;
    const payload = await client.prepare({ ...job, bid: newFid() });
    // A halted node is a graph that cannot run: its dependents would wait on a job nothing queues.
    if (payload === null)
      throw new InvalidFlowError('class', 'was halted by a client middleware, so this node could never run', node.name);
    if (sentinel !== undefined && payload.toString().split(JSON.stringify(sentinel)).length !== 2)
      throw new InvalidFlowError(
        'pipe',
        'cannot be spliced in: its job was built without its last argument as plain bytes (encrypt, or a middleware that rewrote args)',
        node.name,
      );
    built.push({ payload, sentinel });
  }
  return built;
}

/**
 * Stands in the stored payload for the argument a chain link does not have yet; the release splices the upstream's
 * result over its quoted bytes. Random, so no argument of the caller's can be mistaken for it.
 */
function newPipeSentinel(): string {
  return `wurk-pipe-${randomBytes(16).toString('hex')}`;
}

/** The node's job hash: the node without the members that describe its place in the graph, a link's sentinel last. */
function jobOf(node: FlowNode, sentinel: string | undefined): JobHash {
  const job: Record<string, unknown> = { ...node };
  for (const key of ['name', 'dependsOn', 'onFailure', 'pipe']) delete job[key];
  if (sentinel !== undefined) job.args = [...(Array.isArray(node.args) ? node.args : []), sentinel];
  return job as unknown as JobHash;
}

function envelope(
  fid: string,
  graph: FlowGraph,
  index: number,
  { payload, sentinel }: BuiltNode,
  timestamps: Parameters<typeof timestampText>[1],
): FlowNodeEnvelope {
  const node = graph.nodes[index];
  const root = graph.deps[index].length === 0;
  // Only a job queued now has arrived; a waiting node is stamped by the release that queues it.
  if (root) payload.setRaw('enqueued_at', timestampText(nowMs(), timestamps));
  const policy = failurePolicyOf(node);
  const options = { fid, node: index };
  const callbacks = [
    ['success', FLOW_COMPLETION_CLASS, options],
    ['death', policy === 'fail' ? FLOW_COMPLETION_CLASS : FLOW_POLICY_CLASS, options],
  ];
  return {
    i: String(index),
    name: node.name,
    class: payload.className,
    queue: payload.queue,
    jid: payload.jid,
    bid: payload.get<string>('bid') as string,
    state: root ? 'enqueued' : 'waiting',
    payload: payload.toString(),
    desc: `${payload.className}[${JSON.stringify(node.name)}]`,
    cb: JSON.stringify(callbacks),
    deps: JSON.stringify(graph.deps[index]),
    dependents: JSON.stringify(graph.dependents[index]),
    remaining: String(graph.deps[index].length),
    ...(policy === 'fail' ? {} : { on_failure: policy }),
    ...(sentinel === undefined ? {} : { pipe: sentinel }),
  };
}
