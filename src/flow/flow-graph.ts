import { isValidQueueName, QUEUE_NAME_RULE } from '../job/queue-name';
import { FLOW_FAILURE_POLICIES, FLOW_LIMITS, FlowDefinition, FlowFailurePolicy, FlowNode } from './flow-definition';
import { FlowCycleError, FlowLimitError, InvalidFlowError, UnknownFlowDependencyError } from './errors';

/** A checked flow: nodes by declaration index with their edges both ways, and an order that runs parents first. */
export interface FlowGraph {
  nodes: readonly FlowNode[];
  /** For each node (by index), the indexes it depends on. */
  deps: readonly number[][];
  /** For each node (by index), the indexes that depend on it. */
  dependents: readonly number[][];
  /** Every index, each after all of its dependencies. */
  order: readonly number[];
  /** For each node (by index), the index of the node whose result it is handed (its `pipe`), or undefined. */
  pipes: readonly (number | undefined)[];
  /** Levels in the longest dependency path (1 for a flow without edges). */
  depth: number;
  /** The most edges on either side of one node. */
  width: number;
}

/**
 * Checks a definition and resolves its names (Ruby Wurk's `Flow::Builder` rules): a non-empty list of uniquely named
 * nodes, dependencies that name nodes of the flow, no cycle, and the caps of FLOW_LIMITS. Throws an InvalidFlowError
 * (or a subclass) naming the node at fault; writes nothing.
 */
export function buildGraph(definition: FlowDefinition): FlowGraph {
  const nodes = definition?.nodes;
  if (!Array.isArray(nodes) || nodes.length === 0) throw new InvalidFlowError('nodes', 'must be a non-empty array');
  if (nodes.length > FLOW_LIMITS.nodes) throw new FlowLimitError('nodes', FLOW_LIMITS.nodes);
  if (definition.callbackQueue !== undefined && !isValidQueueName(definition.callbackQueue))
    throw new InvalidFlowError('callbackQueue', QUEUE_NAME_RULE);
  const indexOf = new Map<string, number>();
  nodes.forEach((node, index) => {
    checkNode(node, index);
    if (indexOf.has(node.name)) throw new InvalidFlowError('name', 'is used by two nodes', node.name);
    indexOf.set(node.name, index);
  });
  const deps = nodes.map((node) => resolveDeps(node, indexOf));
  const pipes = nodes.map((node, index) => (node.pipe === undefined ? undefined : deps[index][0]));
  pipes.forEach((source, index) => source !== undefined && checkPipeSource(nodes[index], nodes[source]));
  const dependents = nodes.map(() => [] as number[]);
  deps.forEach((parents, child) => parents.forEach((parent) => dependents[parent].push(child)));
  const order = topologicalOrder(nodes, deps);
  const depth = longestPath(order, deps);
  if (depth > FLOW_LIMITS.depth) throw new FlowLimitError('depth', FLOW_LIMITS.depth);
  let width = 0;
  nodes.forEach((node, index) => {
    const edges = Math.max(deps[index].length, dependents[index].length);
    if (edges > FLOW_LIMITS.width) throw new FlowLimitError('width', FLOW_LIMITS.width, node.name);
    width = Math.max(width, edges);
  });
  return { nodes, deps, dependents, pipes, order, depth, width };
}

function checkNode(node: FlowNode, index: number): void {
  if (node === null || typeof node !== 'object') throw new InvalidFlowError(`nodes[${index}]`, 'must be an object');
  const name = node.name;
  if (typeof name !== 'string' || name.length === 0)
    throw new InvalidFlowError(`nodes[${index}].name`, 'must be a non-empty string');
  if (node.dependsOn !== undefined && !Array.isArray(node.dependsOn))
    throw new InvalidFlowError('dependsOn', 'must be an array of node names', name);
  if (node.pipe !== undefined && (typeof node.pipe !== 'string' || node.pipe.length === 0))
    throw new InvalidFlowError('pipe', 'takes the name of one node', name);
  // Ruby Wurk's rule: the piped node is the one dependency, so "the upstream result" names one value.
  if (node.pipe !== undefined && node.dependsOn !== undefined)
    throw new InvalidFlowError('pipe', 'is the dependency, so it cannot be combined with dependsOn', name);
  if (node.onFailure !== undefined && !FLOW_FAILURE_POLICIES.includes(node.onFailure))
    throw new InvalidFlowError('onFailure', `must be one of ${FLOW_FAILURE_POLICIES.join(', ')}`, name);
  // A flow stamps these itself; `at` would need a release path into the schedule that wurk's flows do not take.
  for (const field of ['bid', 'at'] as const)
    if (node[field] !== undefined) throw new InvalidFlowError(field, 'cannot be set on a flow node', name);
}

function resolveDeps(node: FlowNode, indexOf: Map<string, number>): number[] {
  const resolved: number[] = [];
  for (const dependency of node.pipe === undefined ? (node.dependsOn ?? []) : [node.pipe]) {
    const index = typeof dependency === 'string' ? indexOf.get(dependency) : undefined;
    if (index === undefined) throw new UnknownFlowDependencyError(node.name, String(dependency));
    if (resolved.includes(index)) throw new InvalidFlowError('dependsOn', `names ${dependency} twice`, node.name);
    resolved.push(index);
  }
  return resolved;
}

/**
 * The source of a chain link is queued tracked, since its status row is where its result is read from; an explicit
 * `track: false` contradicts the pipe, and picking a winner silently is a chain that breaks in production.
 */
function checkPipeSource(node: FlowNode, source: FlowNode): void {
  if (source.track === false)
    throw new InvalidFlowError(
      'pipe',
      `pipes from ${JSON.stringify(source.name)}, which is declared track: false: a pipe carries the stored result, and an untracked job stores none`,
      node.name,
    );
}

/** Depth-first, so that a cycle is reported as the path that closes it, not as a set of nodes left over. */
function topologicalOrder(nodes: readonly FlowNode[], deps: readonly number[][]): number[] {
  const state = new Array<'open' | 'done' | undefined>(nodes.length);
  const order: number[] = [];
  const path: number[] = [];
  const visit = (index: number): void => {
    if (state[index] === 'done') return;
    if (state[index] === 'open') {
      const cycle = path.slice(path.indexOf(index)).concat(index);
      throw new FlowCycleError(cycle.map((at) => nodes[at].name));
    }
    state[index] = 'open';
    path.push(index);
    for (const parent of deps[index]) visit(parent);
    path.pop();
    state[index] = 'done';
    order.push(index);
  };
  // Recursion is at most as deep as the node cap (1,000), well within the stack.
  nodes.forEach((_, index) => visit(index));
  return order;
}

function longestPath(order: readonly number[], deps: readonly number[][]): number {
  const level = new Array<number>(deps.length).fill(1);
  for (const index of order) for (const parent of deps[index]) level[index] = Math.max(level[index], level[parent] + 1);
  return Math.max(...level);
}

/** The policy a node's death applies, with the default filled in. */
export function failurePolicyOf(node: FlowNode): FlowFailurePolicy {
  return node.onFailure ?? 'fail';
}
