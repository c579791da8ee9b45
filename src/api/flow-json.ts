import type { FlowStatus } from '../flow/flow-status';
import { nullable, nullableNumber, SchemaObject } from './openapi';

/** A flow in the wire's snake_case, as Ruby Wurk's `Flow::Status#data` answers it (never a node's payload). */
export function flowJson(status: FlowStatus): Record<string, unknown> {
  return {
    fid: status.fid,
    state: status.state,
    total: status.total,
    pending: status.pending,
    succeeded: status.succeeded,
    depth: status.depth,
    width: status.width,
    created_at: status.createdAt,
    finished_at: status.finishedAt,
    failed_at: status.failedAt,
    abandoned_at: status.abandonedAt,
    dead_nodes: status.deadNodes,
    nodes: status.nodes.map((node) => ({
      index: node.index,
      name: node.name,
      class: node.class,
      queue: node.queue,
      jid: node.jid,
      bid: node.bid,
      state: node.state,
      depends_on: node.dependsOn,
      dependents: node.dependents,
      remaining: node.remaining,
      on_failure: node.onFailure,
      piped: node.piped,
      error: node.error,
    })),
  };
}

const indexes: SchemaObject = { type: 'array', items: { type: 'integer' } };

/** The OpenAPI schema of flowJson. */
export const FLOW: SchemaObject = {
  type: 'object',
  properties: {
    fid: { type: 'string' },
    state: { type: 'string', enum: ['running', 'succeeded', 'failed', 'abandoned'] },
    ...Object.fromEntries(['total', 'pending', 'succeeded', 'depth', 'width'].map((key) => [key, { type: 'integer' }])),
    ...Object.fromEntries(
      ['created_at', 'finished_at', 'failed_at', 'abandoned_at'].map((key) => [key, nullableNumber]),
    ),
    dead_nodes: indexes,
    nodes: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          index: { type: 'integer' },
          name: nullable({ type: 'string' }),
          ...Object.fromEntries(['class', 'queue', 'jid', 'bid'].map((key) => [key, { type: 'string' }])),
          state: { type: 'string', enum: ['waiting', 'enqueued', 'succeeded', 'dead', 'ignored', 'broken'] },
          depends_on: indexes,
          dependents: indexes,
          remaining: { type: 'integer' },
          on_failure: { type: 'string', enum: ['fail', 'ignore', 'continue'] },
          piped: { type: 'boolean' },
          error: nullable({ type: 'string' }),
        },
      },
    },
  },
};

/** The answer of an abandon: whether this call abandoned the flow, and the state the flow is in now. */
export const FLOW_ABANDONED: SchemaObject = {
  type: 'object',
  properties: {
    fid: { type: 'string' },
    abandoned: { type: 'boolean', description: 'false when the flow had already succeeded or been abandoned' },
    state: { type: 'string', enum: ['running', 'succeeded', 'failed', 'abandoned'] },
  },
};

/** The `fid` path parameter. */
export const FID_PARAM = {
  name: 'fid',
  in: 'path' as const,
  required: true,
  description: 'A flow id',
  schema: { type: 'string' as const, pattern: '^[A-Za-z0-9_-]{1,255}$' },
};
