import { InvalidFlowError } from './errors';
import type { FlowNode } from './flow-definition';

/**
 * A chain (Ruby Wurk's `Flow.chain`): each step after the first pipes the step before it, so it runs once that step
 * succeeded and is handed its stored result as its last argument: `chain([fetch, parse, store])` runs
 * `store.perform(...store.args, parseResult)`. The result is plain nodes, so a branch off a chain is one more node in
 * the same `nodes` list. A step's own `dependsOn` or `pipe` is refused: its place in the chain is its one edge.
 */
export function chain(steps: readonly FlowNode[]): FlowNode[] {
  return steps.map((step, index) => {
    for (const field of ['dependsOn', 'pipe'] as const)
      if (step[field] !== undefined)
        throw new InvalidFlowError(field, 'is set by chain() from the step before', step.name);
    return index === 0 ? { ...step } : { ...step, pipe: steps[index - 1].name };
  });
}
