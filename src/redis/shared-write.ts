/**
 * Two short calls on one connection in one turn of the event loop, in one socket write. A batch's count of its
 * jobs' successes and the fetch call that acknowledges the jobs before them leave in the same turn (each from an
 * immediate of its own) but would leave in two system calls, and on a 2-core machine a system call that wakes Redis
 * costs more than the JavaScript of the call: a batch job's path was CPU-bound on that second write
 * (docs/internals/benchmarks.md, "Batch overhead").
 */
import type Redis from 'ioredis';

/**
 * Runs `call` on a connection that shares its socket writes with another caller's (the fetch connection), or answers
 * undefined when that connection may not take it now (something blocks on it); the caller then sends on its own.
 */
export type RideAlong = <T>(call: (connection: Redis) => Promise<T>) => Promise<T> | undefined;

/** What of an ioredis connection's socket holding its writes needs (ioredis does not type `stream`). */
interface Corkable {
  cork(): void;
  uncork(): void;
}

/** Sockets whose writes are held until the next check phase. */
const held = new WeakSet<Corkable>();

/**
 * Holds `redis`'s socket writes until the event loop's next check phase (a setImmediate), so every command sent on it
 * in the rest of this turn, immediates queued behind this one included, leaves in one system call. The delay is at
 * most one pass of the loop: the poll phase between runs without waiting while an immediate is pending. Only a ready
 * connection is held: a connecting one queues its commands in ioredis and writes them at once on connect.
 */
export function holdWritesForTurn(redis: Redis): void {
  const stream = (redis as unknown as { stream?: Partial<Corkable> }).stream;
  if (redis.status !== 'ready' || typeof stream?.cork !== 'function' || typeof stream.uncork !== 'function') return;
  const socket = stream as Corkable;
  if (held.has(socket)) return;
  held.add(socket);
  socket.cork();
  setImmediate(() => {
    held.delete(socket);
    socket.uncork();
  });
}
