import { BatchCallbackJob, BATCH_CALLBACK_CLASS } from '../../src/batch/batch-callback-job';
import { BatchRecorder } from '../../src/batch/batch-recorder';
import { BatchStore } from '../../src/batch/batch-store';
import { FlowCompletion, FLOW_COMPLETION_CLASS, FLOW_POLICY_CLASS } from '../../src/flow/flow-completion';
import { FlowStore } from '../../src/flow/flow-store';
import type { WorkerClass } from '../../src/job/worker-definition';
import type { WorkerRegistry } from '../../src/job/worker-registry';
import type Redis from 'ioredis';

/**
 * Makes a harness's process a full flow participant, as WurkModule's BatchService and FlowService do: it tells batches
 * each outcome (pass `batchOutcomes(redis)` as the harness's `batches`) and runs the batch callback job and the flow
 * completion targets.
 */
export function runFlowCallbacks(registry: WorkerRegistry, redis: Redis): void {
  const batches = new BatchStore(redis);
  registry.register({
    name: BATCH_CALLBACK_CLASS,
    target: BatchCallbackJob as unknown as WorkerClass,
    options: {},
    instance: new BatchCallbackJob(batches, registry),
    internal: true,
  });
  const completion = new FlowCompletion(new FlowStore(redis));
  for (const name of [FLOW_COMPLETION_CLASS, FLOW_POLICY_CLASS])
    registry.register({
      name,
      target: FlowCompletion as unknown as WorkerClass,
      options: {},
      instance: completion,
      internal: true,
    });
}

/** The settle path's batch port over `redis`. */
export function batchOutcomes(redis: Redis): BatchRecorder {
  return new BatchRecorder(new BatchStore(redis));
}
