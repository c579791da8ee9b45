/**
 * `nestjs-wurk/flows`: Ruby Wurk's flows, DAGs of jobs built on batches, on the `flow:<fid>` keys Ruby reads
 * (docs/flows.md). `FlowService` is provided by `WurkModule`; this entry is where its types and errors are imported
 * from.
 */
export { FlowService } from '../nest/flow.service';
export { chain } from '../flow/flow-chain';
export type { CreatedFlow } from '../flow/flow-writer';
export { FLOW_FAILURE_POLICIES, FLOW_LIMITS } from '../flow/flow-definition';
export type { FlowDefinition, FlowFailurePolicy, FlowNode } from '../flow/flow-definition';
export type { FlowNodeState, FlowNodeStatus, FlowState, FlowStatus } from '../flow/flow-status';
export { FLOW_COMPLETION_CLASS } from '../flow/flow-completion';
export {
  FlowCycleError,
  FlowLimitError,
  FlowNotFoundError,
  InvalidFlowError,
  UnknownFlowDependencyError,
} from '../flow/errors';
