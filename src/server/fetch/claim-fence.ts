import type Redis from 'ioredis';
import type { WritePolicy } from '../../redis/durable-write';
import type { ServerLogger } from '../server-logger';

/** Longest one WAIT of the fence blocks: a master switch announced meanwhile is noticed within this. */
const FENCE_SLICE_MS = 200;

/**
 * A claim or start that no replica acknowledged before the master moved (or the deadline's role check failed): not run.
 */
export class ClaimNotDurableError extends Error {
  /**
   * `saidBySwitch`: the master moved, which the capsule already logs once per switch; the fetch loop then says nothing
   * more (a backlog of claims under way would repeat it once per claim).
   */
  constructor(
    reason: string,
    readonly saidBySwitch = false,
  ) {
    super(`a claim was not run: ${reason}`);
    this.name = 'ClaimNotDurableError';
  }
}

/**
 * The start fence of reliable fetch under Sentinel. A claim (or the start of
 * a claimed job) written to a master that is being deposed exists on that
 * master only: Redis promotes the replica first and demotes the old master
 * a moment later, throwing away what it took meanwhile, so the new master
 * still has those jobs in their public queue and some process runs them
 * again. A job runs only once a replica acknowledged its claim (`WAIT` on
 * the connection that wrote it, which covers every earlier write of that
 * connection). While no replica answers, the fence waits in short slices:
 * a switch announced meanwhile (`switched()`) fails it, and the caller treats
 * the claim as a reply lost (the jobs are not run; what did land is a stray,
 * handed back by reconcile). Past the write deadline with no switch, a
 * master that still says it is master, and that the Sentinels still name
 * as the master (`doubtsMaster`: a deposed master says "master" for seconds
 * after its replica was promoted), runs its claims (a fleet down to one
 * server keeps working; said once in the log).
 */
export class ClaimFence {
  /**
   * Past a deadline with no replica and no switch: claims run on the master alone until a replica acknowledges again.
   */
  private alone = false;
  private epoch = 0;

  constructor(
    private readonly writes: WritePolicy | undefined,
    private readonly logger: ServerLogger,
    /** The Sentinels' word on the server a connection is on: undefined when they name it master, else why not. */
    private readonly doubtsMaster?: (connection: Redis) => Promise<string | undefined>,
  ) {}

  get enabled(): boolean {
    return this.writes !== undefined && this.writes.replicas > 0;
  }

  /** The master moved: every fence under way fails, and the new master is fenced afresh. */
  switched(): void {
    // Any change fails the marks taken before it; which way the count moves tells nothing.
    // Stryker disable next-line UpdateOperator
    this.epoch++;
    this.alone = false;
  }

  /** Where the switches stand now: taken before a write is sent, given to `confirm`. */
  mark(): number {
    return this.epoch;
  }

  /**
   * Resolves when the writes of `connection` since `mark` are on a replica (or past the deadline on a master); else
   * rejects.
   */
  async confirm(connection: Redis, mark: number): Promise<void> {
    const writes = this.writes;
    // Its one caller (Strays.confirmClaims) asks only when `enabled`: this guard narrows the type and keeps the rule.
    // Stryker disable next-line ConditionalExpression
    if (!writes || writes.replicas === 0) return;
    const deadline = Date.now() + writes.deadlineMs;
    for (;;) {
      if (this.epoch !== mark)
        throw new ClaimNotDurableError('the master moved before a replica acknowledged it', true);
      // Alone, a look only (1 ms): each claim must not wait out the deadline again.
      const slice = this.alone ? 1 : Math.min(FENCE_SLICE_MS, writes.waitTimeoutMs || FENCE_SLICE_MS);
      const acknowledged = Number(await connection.call('WAIT', writes.replicas, slice));
      // Acknowledged: a replica had it, so the master that follows has it too, whatever was announced meanwhile.
      if (acknowledged >= writes.replicas) {
        this.fencedAgain();
        return;
      }
      if (this.epoch !== mark)
        throw new ClaimNotDurableError('the master moved before a replica acknowledged it', true);
      if (this.alone || Date.now() >= deadline) return this.lastResort(connection, writes.replicas, this.alone);
    }
  }

  /** `alone`: whether claims ran alone when this check gave up waiting (other checks may change it meanwhile). */
  private async lastResort(connection: Redis, replicas: number, alone: boolean): Promise<void> {
    const role = (await connection.call('ROLE')) as unknown[];
    if (String(role[0]) !== 'master') throw new ClaimNotDurableError(`the server is a ${String(role[0])} now`);
    const doubt = await this.doubtsMaster?.(connection);
    if (doubt !== undefined) throw new ClaimNotDurableError(doubt);
    if (alone) {
      // Alone, a claim looks for an acknowledgment for 1 ms only, which a replica that is back but a little slower
      // (on another host, or busy) never meets: the fleet would stay alone, exposed to a failover, for good. ROLE
      // lists the replicas that follow; with enough of them, the next claim waits for their acknowledgment again.
      if (followingReplicas(role) >= replicas) this.fencedAgain();
      return;
    }
    // Said once: the checks of claims under way at the same time reach here together.
    if (!this.alone)
      this.logger.warn(
        'no replica acknowledged claims within the write timeout: running them on the master alone (a failover now could run them twice)',
      );
    this.alone = true;
  }

  /** Running alone ends; said once, whichever of the checks under way at the same time notices first. */
  private fencedAgain(): void {
    if (!this.alone) return;
    this.alone = false;
    this.logger.log('a replica follows again: claims wait for its acknowledgment again');
  }
}

/** How many replicas a master's ROLE reply lists as following it (those in sync: `online`). */
function followingReplicas(role: unknown[]): number {
  return Array.isArray(role[2]) ? role[2].length : 0;
}
