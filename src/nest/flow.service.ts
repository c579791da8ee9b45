import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { FlowCompletion, FLOW_COMPLETION_CLASS, FLOW_POLICY_CLASS } from '../flow/flow-completion';
import type { FlowDefinition } from '../flow/flow-definition';
import type { FlowStatus } from '../flow/flow-status';
import { FlowStore, FlowStep } from '../flow/flow-store';
import { CreatedFlow, createFlow } from '../flow/flow-writer';
import { isValidFid } from '../flow/fid';
import { InvalidFlowError } from '../flow/errors';
import type { WorkerClass } from '../job/worker-definition';
import { WorkerRegistry } from '../job/worker-registry';
import { RedisConnections } from '../redis/connections';
import { ClientService } from './client.service';
import { WURK_RESOLVED_OPTIONS } from './tokens';
import type { ResolvedWurkOptions } from './wurk-options';

/**
 * Ruby Wurk's flows (BullMQ's `FlowProducer`): `create({ nodes })` writes a DAG of jobs in one step and queues its
 * roots; each other node is queued when all its dependencies succeeded. `status(fid)` reads any flow, a Ruby
 * process's included. Also runs this process's share of the callbacks that advance flows.
 */
@Injectable()
export class FlowService implements OnModuleInit {
  private readonly store: FlowStore;
  private readonly logger = new Logger('WurkFlows');

  constructor(
    connections: RedisConnections,
    private readonly client: ClientService,
    private readonly registry: WorkerRegistry,
    @Inject(WURK_RESOLVED_OPTIONS) options: ResolvedWurkOptions,
  ) {
    this.store = new FlowStore(connections.command, options.timestamps);
  }

  /** Registers the runner of the node batches' callbacks (run through the batch callback job). */
  onModuleInit(): void {
    const instance = new FlowCompletion(this.store, (fid, index, event, step) => this.logStep(fid, index, event, step));
    for (const name of [FLOW_COMPLETION_CLASS, FLOW_POLICY_CLASS])
      this.registry.register({
        name,
        target: FlowCompletion as unknown as WorkerClass,
        options: {},
        instance,
        internal: true,
      });
  }

  /**
   * Creates a flow: checks the graph (an InvalidFlowError, FlowCycleError, UnknownFlowDependencyError or
   * FlowLimitError names the node at fault, and nothing is written), builds every node's job through the client, then
   * writes it all and queues the roots in one script. Resolves to the fid and each node's jid and bid by name.
   */
  create(definition: FlowDefinition): Promise<CreatedFlow> {
    return createFlow(this.client, this.store, definition);
  }

  /** The flow and its nodes as Redis holds them now; throws FlowNotFoundError for an unknown or expired fid. */
  status(fid: string): Promise<FlowStatus> {
    if (!isValidFid(fid)) return Promise.reject(new InvalidFlowError('fid', 'must be 1 to 255 of A-Z a-z 0-9 _ -'));
    return this.store.find(fid);
  }

  /**
   * Abandons a running or failed flow (Ruby Wurk's `flow.abandon`), in one script: no node is released again, its
   * node records, node batches and dead set are deleted, and it reads `abandoned`. A job already queued is not chased
   * out of its queue: it runs, and its success advances nothing. Resolves false when the flow had already succeeded
   * or been abandoned (nothing written); throws FlowNotFoundError for an unknown or expired fid.
   */
  abandon(fid: string): Promise<boolean> {
    if (!isValidFid(fid)) return Promise.reject(new InvalidFlowError('fid', 'must be 1 to 255 of A-Z a-z 0-9 _ -'));
    return this.store.abandon(fid);
  }

  private logStep(fid: string, index: number, event: 'success' | 'death', step: FlowStep): void {
    if (event === 'death' && step.claimed)
      this.logger.warn(`flow ${fid}: node ${index} died; its failure policy decides what its dependents do`);
    for (const { index: broken, reason } of step.broken)
      this.logger.error(`flow ${fid}: node ${broken} cannot run (${reason}); the flow is marked failed`);
  }
}
