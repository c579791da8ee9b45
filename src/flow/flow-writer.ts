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
  const payloads = await buildPayloads(client, graph);
  const envelopes = graph.order.map((index) => envelope(fid, graph, index, payloads[index], client.timestampMode));
  await store.create(
    { fid, depth: graph.depth, width: graph.width, callbackQueue: definition.callbackQueue ?? 'default', expiresIn },
    envelopes,
  );
  const byName = (field: 'jid' | 'bid') =>
    Object.fromEntries(graph.nodes.map((node, index) => [node.name, payloads[index].get<string>(field) as string]));
  return { fid, jids: byName('jid'), bids: byName('bid') };
}

async function buildPayloads(client: Client, graph: FlowGraph): Promise<JobPayload[]> {
  const payloads: JobPayload[] = [];
  for (const node of graph.nodes) {
    const payload = await client.prepare({ ...jobOf(node), bid: newFid() });
    // A halted node is a graph that cannot run: its dependents would wait on a job nothing queues.
    if (payload === null)
      throw new InvalidFlowError('class', 'was halted by a client middleware, so this node could never run', node.name);
    payloads.push(payload);
  }
  return payloads;
}

/** The node's job hash: the node without the members that describe its place in the graph. */
function jobOf(node: FlowNode): JobHash {
  const job: Record<string, unknown> = { ...node };
  for (const key of ['name', 'dependsOn', 'onFailure']) delete job[key];
  return job as JobHash;
}

function envelope(
  fid: string,
  graph: FlowGraph,
  index: number,
  payload: JobPayload,
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
  };
}
