import { WurkError } from '../job/errors';

/**
 * A flow that wurk refuses before anything reaches Redis (Ruby Wurk's `Flow::InvalidGraph`): `node` names the node at
 * fault when there is one, `field` what is wrong with it.
 */
export class InvalidFlowError extends WurkError {
  constructor(
    readonly field: string,
    readonly reason: string,
    readonly node?: string,
  ) {
    super(node === undefined ? `flow ${field} ${reason}` : `flow node ${JSON.stringify(node)}: ${field} ${reason}`);
  }
}

/** A node depends on a name no node of the flow has. */
export class UnknownFlowDependencyError extends InvalidFlowError {
  constructor(
    node: string,
    readonly dependency: string,
  ) {
    super('dependsOn', `names ${JSON.stringify(dependency)}, which is no node of this flow`, node);
  }
}

/** The graph has a cycle; `cycle` is its whole path, first node repeated last, so the edge to delete can be seen. */
export class FlowCycleError extends InvalidFlowError {
  constructor(readonly cycle: readonly string[]) {
    super('dependsOn', `makes a cycle: ${cycle.join(' -> ')} (read -> as "depends on")`, cycle[0]);
  }
}

/** The graph is past one of the caps (FLOW_LIMITS): too many nodes, too deep, or too wide at `node`. */
export class FlowLimitError extends InvalidFlowError {
  constructor(
    readonly limit: 'nodes' | 'depth' | 'width',
    readonly max: number,
    node?: string,
  ) {
    super(limit, `exceeds the cap of ${max}`, node);
  }
}

/** No flow with this fid: never created, or expired (30 days by default). */
export class FlowNotFoundError extends WurkError {
  constructor(readonly fid: string) {
    super(`no flow ${JSON.stringify(fid)}`);
  }
}
