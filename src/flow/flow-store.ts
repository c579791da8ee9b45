import type Redis from 'ioredis';
import { floatText, nowMs, TimestampMode, timestampText } from '../job/time';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import { FlowNotFoundError } from './errors';
import { FLOW_LIMITS } from './flow-definition';
import { FlowStatus, NODE_FIELDS, toFlowStatus } from './flow-status';

/** A flow's keys live as long as a batch's: 30 days unless the flow says otherwise. */
export const FLOW_EXPIRY_SECONDS = 30 * 24 * 3600;

/** One node as flow_create.lua takes it: every value a string, the payload as its exact bytes. */
export interface FlowNodeEnvelope {
  i: string;
  name: string;
  class: string;
  queue: string;
  jid: string;
  bid: string;
  state: 'enqueued' | 'waiting';
  payload: string;
  desc: string;
  cb: string;
  deps: string;
  dependents: string;
  remaining: string;
  on_failure?: string;
  /** A chain link's sentinel: the quoted string in `payload` its upstream's result replaces on release. */
  pipe?: string;
}

/** The flow-wide part of a creation. */
export interface FlowHeader {
  fid: string;
  depth: number;
  width: number;
  callbackQueue: string;
  expiresIn: number;
}

/** What an advance or a death did: the jobs it queued (class and queue) and the nodes it could not build. */
export interface FlowStep {
  /** False when the flow is gone or the node was already past this step (a callback run twice): nothing changed. */
  claimed: boolean;
  released: Array<{ class: string; queue: string }>;
  broken: Array<{ index: number; reason: string }>;
}

/** Flows in Redis, in Ruby Wurk's `flow:<fid>` layout: one named method per script, and the one reader. */
export class FlowStore {
  constructor(
    private readonly redis: Redis,
    private readonly timestamps: TimestampMode = 'seconds',
  ) {}

  /** Writes a whole flow and queues its roots, in topological order; false when the fid exists (nothing written). */
  async create(header: FlowHeader, envelopes: FlowNodeEnvelope[]): Promise<boolean> {
    const keys = [Keys.flow(header.fid), Keys.flows, Keys.batches, Keys.queues];
    for (const node of envelopes) keys.push(...nodeKeys(header.fid, Number(node.i), node.bid, node.queue));
    const args = [
      header.fid,
      floatText(nowMs() / 1000),
      header.expiresIn,
      header.depth,
      header.width,
      header.callbackQueue,
      // The indexes' window is a batch's default life, not this flow's: Ruby Wurk's Batch.trim_bounds.
      FLOW_EXPIRY_SECONDS,
      ...envelopes.map((node) => JSON.stringify(node)),
    ];
    return (await runScript<number>(this.redis, 'flow_create', keys, args)) >= 0;
  }

  /** Node `index` succeeded: releases the dependents it was the last dependency of (lua/flow_advance.lua). */
  async advance(fid: string, index: number): Promise<FlowStep> {
    const node = await this.redis.hmget(Keys.flowNode(fid, index), 'jid', 'dependents');
    const dependents = parseIndexes(node[1]);
    const keys = [
      Keys.flow(fid),
      Keys.queues,
      Keys.schedule,
      Keys.flowDead(fid),
      Keys.flowNode(fid, index),
      Keys.status(node[0] ?? ''),
      ...(await this.dependentKeys(fid, dependents)),
    ];
    const [pending, released, broken] = await runScript<[number, string[], string[]]>(
      this.redis,
      'flow_advance',
      keys,
      [index, ...this.clock(), ...dependents],
    );
    return {
      claimed: Number(pending) >= 0,
      released: pairs(released).map(([className, queue]) => ({ class: className, queue })),
      broken: pairs(broken).map(([at, reason]) => ({ index: Number(at), reason })),
    };
  }

  /** Node `index`'s job died: its failure policy decides what its dependents do (lua/flow_fail.lua). */
  async fail(fid: string, index: number): Promise<FlowStep> {
    const [bid, dependentsText] = await this.redis.hmget(Keys.flowNode(fid, index), 'bid', 'dependents');
    const dependents = parseIndexes(dependentsText);
    const keys = [
      Keys.flow(fid),
      Keys.flowNode(fid, index),
      Keys.flowDead(fid),
      Keys.queues,
      Keys.schedule,
      Keys.batchFailed(bid ?? ''),
      Keys.batchDied(bid ?? ''),
      Keys.batchFailInfo(bid ?? ''),
      ...(await this.dependentKeys(fid, dependents)),
    ];
    const [claimed, released] = await runScript<[number, string[]]>(this.redis, 'flow_fail', keys, [
      index,
      ...this.clock(),
      ...dependents,
    ]);
    return {
      claimed: Number(claimed) === 1,
      released: pairs(released).map(([className, queue]) => ({ class: className, queue })),
      broken: [],
    };
  }

  /**
   * Abandons a running or failed flow (lua/flow_abandon.lua): its node records, node batches and dead set are deleted
   * and it reads `abandoned`, so no node is released again; a job already queued still runs and advances nothing.
   * False when it was already settled or abandoned (nothing written); FlowNotFoundError when there is no flow.
   */
  async abandon(fid: string): Promise<boolean> {
    const total = await this.redis.hget(Keys.flow(fid), 'total');
    if (total === null) throw new FlowNotFoundError(fid);
    const count = Math.max(0, Math.min(Number(total) || 0, FLOW_LIMITS.nodes));
    const pipeline = this.redis.pipeline();
    for (let index = 0; index < count; index++) pipeline.hget(Keys.flowNode(fid, index), 'bid');
    const bids = ((await pipeline.exec()) ?? []).flatMap(([error, bid]) => {
      if (error) throw error;
      return typeof bid === 'string' && bid !== '' ? [bid] : [];
    });
    const keys = [Keys.flow(fid), Keys.batches, Keys.deadBatches, Keys.flowDead(fid)];
    for (let index = 0; index < count; index++) keys.push(Keys.flowNode(fid, index));
    for (const bid of bids) keys.push(...batchKeys(bid));
    const now = floatText(nowMs() / 1000);
    return (await runScript<number>(this.redis, 'flow_abandon', keys, [now, ...bids])) >= 0;
  }

  /** Reads a flow written by any process; throws FlowNotFoundError when there is none. */
  async find(fid: string): Promise<FlowStatus> {
    const [header, dead] = await Promise.all([
      this.redis.hgetall(Keys.flow(fid)),
      this.redis.smembers(Keys.flowDead(fid)),
    ]);
    if (Object.keys(header).length === 0) throw new FlowNotFoundError(fid);
    // `total` is the flow's own count, capped as creation caps it: a garbled header cannot ask for a huge read.
    const total = Math.max(0, Math.min(Number(header.total) || 0, FLOW_LIMITS.nodes));
    const pipeline = this.redis.pipeline();
    for (let index = 0; index < total; index++) pipeline.hmget(Keys.flowNode(fid, index), ...NODE_FIELDS);
    const rows = ((await pipeline.exec()) ?? []).map(([error, row]) => {
      if (error) throw error;
      return row as Array<string | null>;
    });
    return toFlowStatus(fid, header, dead, rows);
  }

  /** now (float seconds), the enqueued_at a released job gets (the writer's dialect), and the default expiry. */
  private clock(): Array<string | number> {
    const now = nowMs();
    return [floatText(now / 1000), timestampText(now, this.timestamps), FLOW_EXPIRY_SECONDS];
  }

  /** Four keys per dependent; its bid and queue are fixed at creation, so reading them ahead of the script is safe. */
  private async dependentKeys(fid: string, dependents: number[]): Promise<string[]> {
    if (dependents.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const index of dependents) pipeline.hmget(Keys.flowNode(fid, index), 'bid', 'queue');
    const rows = (await pipeline.exec()) ?? [];
    return dependents.flatMap((index, at) => {
      const [error, row] = rows[at];
      if (error) throw error;
      const [bid, queue] = row as Array<string | null>;
      return nodeKeys(fid, index, bid ?? '', queue ?? 'default');
    });
  }
}

/** A node's four keys, in the order the flow scripts take them. */
function nodeKeys(fid: string, index: number, bid: string, queue: string): string[] {
  return [Keys.flowNode(fid, index), Keys.batch(bid), Keys.batchJids(bid), Keys.queue(queue)];
}

/** Every key of a node's batch: its hash, its sets, its fired markers. */
function batchKeys(bid: string): string[] {
  return [
    Keys.batch(bid),
    Keys.batchJids(bid),
    Keys.batchFailed(bid),
    Keys.batchDied(bid),
    Keys.batchFailInfo(bid),
    Keys.batchFired(bid, 'complete'),
    Keys.batchFired(bid, 'success'),
    Keys.batchFired(bid, 'death'),
  ];
}

function parseIndexes(text: string | null): number[] {
  try {
    const parsed: unknown = JSON.parse(text ?? '[]');
    return Array.isArray(parsed) ? parsed.map(Number).filter(Number.isInteger) : [];
  } catch {
    return [];
  }
}

function pairs(flat: string[] | undefined): Array<[string, string]> {
  const result: Array<[string, string]> = [];
  for (let at = 0; at + 1 < (flat ?? []).length; at += 2) result.push([String(flat![at]), String(flat![at + 1])]);
  return result;
}
