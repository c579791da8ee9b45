import type { FlowStep, FlowStore } from './flow-store';

/**
 * The class every node's batch names as its callback target, Ruby Wurk's (`Wurk::Flow::ADVANCE_CALLBACK`): a Ruby or a
 * wurk process may advance any flow.
 */
export const FLOW_COMPLETION_CLASS = 'Wurk::Flow::Completion';

/**
 * The death callback of a node whose failure policy is `ignore` or `continue`: a name only wurk registers, because Ruby
 * Wurk's Completion knows only `fail`. A Ruby process that fetches it fails it into retry, where a wurk process runs
 * it; the node's policy is never silently replaced by `fail`.
 */
export const FLOW_POLICY_CLASS = 'NestjsWurk::Flow::Completion';

/** Told what an advance or a death released or broke, for logs and metrics. */
export type FlowStepListener = (fid: string, index: number, event: 'success' | 'death', step: FlowStep) => void;

/**
 * Runs a node batch's callbacks (`args: [bid, target, event, {fid, node}]`, through the batch callback job): a node's
 * success advances its flow, its death applies its failure policy. Both are one script each, claimed on the node's
 * state, so a callback job that runs twice (callbacks are at-least-once) changes the flow once.
 */
export class FlowCompletion {
  constructor(
    private readonly store: FlowStore,
    private readonly onStep?: FlowStepListener,
  ) {}

  /** Never called: a callback target runs through `onSuccess` / `onDeath`; a job naming this class directly fails. */
  perform(): never {
    throw new Error(`${FLOW_COMPLETION_CLASS} runs only as a batch callback target`);
  }

  /** The node's job succeeded. */
  async onSuccess(_status: unknown, options: Record<string, unknown>): Promise<void> {
    const address = addressOf(options);
    if (!address) return;
    const step = await this.store.advance(...address);
    this.onStep?.(...address, 'success', step);
  }

  /** The node's job died. */
  async onDeath(_status: unknown, options: Record<string, unknown>): Promise<void> {
    const address = addressOf(options);
    if (!address) return;
    const step = await this.store.fail(...address);
    this.onStep?.(...address, 'death', step);
  }
}

/** The options creation wrote, `{fid, node}`; an address that is not one names no node, and nothing is done. */
function addressOf(options: Record<string, unknown>): [string, number] | undefined {
  const fid = options?.fid;
  const index = Number(options?.node);
  return typeof fid === 'string' && Number.isInteger(index) && index >= 0 ? [fid, index] : undefined;
}
