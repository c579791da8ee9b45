import { toEpochSeconds } from '../job/time';

/** A flow's state: `failed` is left again when its dead nodes' jobs are retried to success. */
export type FlowState = 'running' | 'succeeded' | 'failed' | 'abandoned';

/**
 * A node's state: `waiting` for its dependencies, `enqueued` (its job is queued or running), `succeeded`, `dead` (its
 * job died under the `fail` policy), `ignored` (its job died under `ignore` or `continue`), `broken` (a chain link
 * whose upstream left no result).
 */
export type FlowNodeState = 'waiting' | 'enqueued' | 'succeeded' | 'dead' | 'ignored' | 'broken';

/** One node as Redis holds it (Ruby Wurk's `Flow::Status::Node`). */
export interface FlowNodeStatus {
  index: number;
  name: string | null;
  class: string;
  queue: string;
  jid: string;
  bid: string;
  state: FlowNodeState | string;
  /** Indexes of the nodes this one depends on. */
  dependsOn: number[];
  /** Indexes of the nodes that depend on this one. */
  dependents: number[];
  /** Dependencies not yet met. */
  remaining: number;
  /** What its death does to its dependents; `fail` for a node a Ruby process wrote. */
  onFailure: string;
  /** True for a chain link (`pipe`), handed its upstream's result. */
  piped: boolean;
  /** Why a broken node could not be built. */
  error: string | null;
}

/** A flow as read from Redis (Ruby Wurk's `Flow::Status#data`), whichever process wrote it. */
export interface FlowStatus {
  fid: string;
  state: FlowState | string;
  total: number;
  /** Nodes not yet settled (succeeded, or died under a policy that lets the flow go on). */
  pending: number;
  /** `total - pending`. */
  succeeded: number;
  depth: number;
  width: number;
  /** Epoch seconds. */
  createdAt: number | null;
  finishedAt: number | null;
  failedAt: number | null;
  abandonedAt: number | null;
  /** Indexes of the nodes the flow is failed because of. */
  deadNodes: number[];
  /** Every node, by index. */
  nodes: FlowNodeStatus[];
}

/** Every node field but `payload` (the caller's arguments, which no reader shows). */
export const NODE_FIELDS = [
  'index',
  'name',
  'class',
  'queue',
  'jid',
  'bid',
  'state',
  'deps',
  'dependents',
  'remaining',
  'pipe',
  'error',
  'on_failure',
] as const;

/** Builds a status from its reads, leniently: a field left out or garbled reads as null, 0 or [], never throws. */
export function toFlowStatus(
  fid: string,
  header: Record<string, string>,
  dead: string[],
  rows: Array<Array<string | null>>,
): FlowStatus {
  const total = count(header.total);
  const pending = count(header.pending);
  const at = (field: string) => toEpochSeconds(numberOrUndefined(header[field])) ?? null;
  return {
    fid,
    state: header.state ?? 'running',
    total,
    pending,
    succeeded: total - pending,
    depth: count(header.depth),
    width: count(header.width),
    createdAt: at('created_at'),
    finishedAt: at('finished_at'),
    failedAt: at('failed_at'),
    abandonedAt: at('abandoned_at'),
    deadNodes: dead
      .map(Number)
      .filter(Number.isInteger)
      .sort((a, b) => a - b),
    nodes: rows.filter((row) => row[0] !== null).map(toNode),
  };
}

function toNode(row: Array<string | null>): FlowNodeStatus {
  const field = (name: (typeof NODE_FIELDS)[number]) => row[NODE_FIELDS.indexOf(name)];
  return {
    index: count(field('index')),
    name: field('name') || null,
    class: field('class') ?? '',
    queue: field('queue') ?? '',
    jid: field('jid') ?? '',
    bid: field('bid') ?? '',
    state: field('state') ?? '',
    dependsOn: indexes(field('deps')),
    dependents: indexes(field('dependents')),
    remaining: count(field('remaining')),
    onFailure: field('on_failure') || 'fail',
    piped: Boolean(field('pipe')),
    error: field('error') || null,
  };
}

function indexes(text: string | null): number[] {
  try {
    const parsed: unknown = JSON.parse(text ?? '[]');
    return Array.isArray(parsed) ? parsed.map(Number).filter(Number.isInteger) : [];
  } catch {
    return [];
  }
}

function count(text: string | null | undefined): number {
  const value = Number(text);
  return text !== null && text !== undefined && Number.isFinite(value) ? value : 0;
}

function numberOrUndefined(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}
