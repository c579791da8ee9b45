/** What the gate needs of each capsule: how many of its jobs hold a slot, and a nudge to start what it can. */
export interface GatedPool {
  readonly occupied: number;
  startPrefetched(): void;
  /** Ends a claim blocked on empty queues now (it holds slots for jobs it might start directly). */
  interruptClaim(): void;
}

/**
 * A suspect (a job recovered after it started in a process that died) runs
 * alone in the whole process, not only in its capsule: if it takes the
 * process down again, every job running beside it, in any capsule, would
 * be counted toward maxOrphanings with it. While one capsule waits for the
 * process to empty, the others start nothing new, so a busy neighbour
 * cannot starve it.
 */
export class SuspectGate {
  private readonly pools: GatedPool[] = [];
  private readonly waiting = new Set<GatedPool>();
  /** A suspect is starting or running. */
  isolating = false;

  add(pool: GatedPool): void {
    this.pools.push(pool);
  }

  /** Jobs starting or running in every capsule. */
  get occupied(): number {
    let total = 0;
    for (const pool of this.pools) total += pool.occupied;
    return total;
  }

  /** Whether `pool` may start an ordinary job now. */
  allows(pool: GatedPool): boolean {
    return !this.isolating && (this.waiting.size === 0 || this.waiting.has(pool));
  }

  /** `pool` has a suspect next and waits for the process to empty (or no longer does). */
  wait(pool: GatedPool, waiting: boolean): void {
    if (waiting) {
      if (this.waiting.has(pool)) return;
      this.waiting.add(pool);
      // An idle neighbour's blocked claim holds its free slots for jobs it might start directly:
      // it must return, and claim again without starting any, for the process to count as empty.
      for (const other of this.pools) if (other !== pool) other.interruptClaim();
    } else if (this.waiting.delete(pool)) {
      this.resumeOthers(pool);
    }
  }

  /** A slot came free in `from`: a capsule waiting for the process to empty may be able to start its suspect. */
  nudge(from: GatedPool): void {
    if (this.waiting.size > 0) this.resumeOthers(from);
  }

  /** The suspect started by `from` settled (or never started): every capsule may start jobs again. */
  release(from: GatedPool): void {
    this.isolating = false;
    this.resumeOthers(from);
  }

  private resumeOthers(from: GatedPool): void {
    for (const pool of this.pools) if (pool !== from) pool.startPrefetched();
  }
}
