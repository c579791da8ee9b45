import type { JobHash } from '../job/job-hash';

/**
 * What the death of a node's job does to the nodes that depend on it (a job dies when its retries are spent, or it is
 * discarded). BullMQ sets the same choice on a child job; here it is set on the node whose death it is about.
 *
 * - `fail` (the default, and Ruby Wurk's rule; BullMQ's `failParentOnFailure`, but recoverable): its dependents never
 *   run and the flow reads `failed`. Retrying the dead job to success resumes the flow where it stopped.
 * - `ignore` (BullMQ's `ignoreDependencyOnFailure`): the death counts as the dependency met; a dependent runs once
 *   its other dependencies succeed.
 * - `continue` (BullMQ's `continueParentOnFailure`): every dependent still waiting runs at once, without waiting for
 *   its other dependencies (a clean-up or compensation step).
 */
export type FlowFailurePolicy = 'fail' | 'ignore' | 'continue';

/** The failure policies, the default first. */
export const FLOW_FAILURE_POLICIES: readonly FlowFailurePolicy[] = ['fail', 'ignore', 'continue'];

/**
 * One node of a flow: one job (the hash `ClientService.push` takes) with a name, the names it depends on and its
 * failure policy.
 */
export interface FlowNode extends JobHash {
  /** The node's name, unique in its flow; `dependsOn` and the created flow's `jids` use it. */
  name: string;
  /** Names of the nodes that must succeed before this one runs; none makes it a root, queued at creation. */
  dependsOn?: string[];
  /** What this node's death does to its dependents (default `fail`). */
  onFailure?: FlowFailurePolicy;
  /**
   * The one node whose stored result is handed to this one as its last argument (Ruby Wurk's `pipe:`, a chain link).
   * It is this node's only dependency, so it cannot be combined with `dependsOn`; that node is queued with
   * `track: true`, since its status row is where the result is read from, and an explicit `track: false` on it is
   * refused. A result that is missing, truncated (over 8 KB) or withheld (`encrypt`) breaks the link instead.
   */
  pipe?: string;
}

/** A flow to create: its nodes, in any order (a node may depend on one declared after it). */
export interface FlowDefinition {
  nodes: FlowNode[];
  /** The queue of the callback jobs that advance the flow (default `default`): a queue your processes fetch. */
  callbackQueue?: string;
  /** Seconds every key of the flow lives (default 30 days, the batch clock). */
  expiresIn?: number;
}

/** Ruby Wurk's caps (`Wurk::Flow::MAX_NODES`, `MAX_DEPTH`, `MAX_WIDTH`): constants, not options. */
export const FLOW_LIMITS = {
  /** Nodes in one flow: the whole graph is one script call. */
  nodes: 1000,
  /** The longest dependency path, in nodes: each level is a callback hop of latency. */
  depth: 50,
  /** The most edges on either side of one node. */
  width: 100,
} as const;
