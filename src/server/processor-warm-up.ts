import { MiddlewareChain } from '../job/middleware-chain';
import { WorkerRegistry } from '../job/worker-registry';
import { startedJob } from './fetch/claimed-job';
import type { Fetcher } from './fetch/fetcher';
import type { HeartbeatPort } from './heartbeat/heartbeat-port';
import type { ExecutionCarrier } from './job-execution';
import { Processor } from './processor';
import type { JobLifecycleListener, ServerContext } from './server-middleware';
import { ignoresUnmarkedJobs } from './unmarked-job-listener';

const WARM_CLASS = 'Wurk::WarmUp';

class WarmUpWorker {
  perform(..._args: unknown[]): void {}
}

const ignore = (): void => undefined;

/** A heartbeat that hears nothing: the warm-up job is no job, and no count or metric may see it. */
const silentHeartbeat: HeartbeatPort = {
  start: async () => undefined,
  setWork: ignore,
  countProcessed: ignore,
  countFailed: ignore,
  countExpired: ignore,
  recordExecution: ignore,
  setQuiet: ignore,
  onSignal: ignore,
  stop: async () => undefined,
};

/**
 * Boot: runs one made-up job through a Processor of its own, wired to
 * nothing (no Redis, no heartbeat, none of the application's middleware,
 * listeners or workers, which must only ever see real jobs), so that what a
 * first job would pay is paid at start: when the app reads JobContext, the
 * first `run` of the job's AsyncLocalStorage installs Node's promise hooks
 * (about a millisecond), and V8 compiles each function of the path at its first call (the payload
 * parse, the processor's run and notify, the middleware chain, perform),
 * whichever instance makes it. Of `listeners`, only wurk's own that ignore
 * a job without their marks hear it: the made-up job carries no `track`, no
 * unique lock and no periodic slot, so they decide it is none of theirs.
 */
// a warm-up only moves first-use compile time to boot; nothing a test can observe but timing.
// Stryker disable next-line BlockStatement
export async function warmProcessor(
  executions: ExecutionCarrier,
  listeners: readonly JobLifecycleListener[],
): Promise<void> {
  const registry = new WorkerRegistry();
  registry.register({ name: WARM_CLASS, target: WarmUpWorker, options: {}, instance: new WarmUpWorker() });
  const listener: JobLifecycleListener = { onStart: ignore, onSettled: ignore };
  const middleware = new MiddlewareChain<ServerContext>().use((_context, next) => next());
  const fetcher = { acknowledge: ignore } as unknown as Fetcher;
  const processor = new Processor({
    registry,
    middleware,
    listeners: [listener, ...listeners.filter(ignoresUnmarkedJobs)],
    heartbeat: silentHeartbeat,
    fetcher,
    maxRetries: 0,
    timestamps: 'millis',
    executionMetrics: true,
    errorHandlers: [],
    deathHandlers: [],
    logger: { log: ignore, warn: ignore, error: ignore },
    signal: new AbortController().signal,
    pending: [],
    overLimit: { retries: 0, backoff: () => 0 },
    executions,
  });
  const job = startedJob(
    `{"class":"${WARM_CLASS}","args":[1.0,"x"],"jid":"0","queue":"default","created_at":1.5}`,
    'default',
  );
  await processor.run(job);
}

/**
 * Longest start() waits for the fetch connections and scripts (see Fetcher.warmUp), and again for the boot orphan check
 * and first poll.
 */
const WARM_UP_LIMIT_MS = 2000;

/**
 * Boot steps that only make the first jobs faster are waited for this long at most: with Redis away the loops retry on
 * their own.
 */
export async function withinWarmUpLimit(step: Promise<unknown>): Promise<void> {
  let bound: NodeJS.Timeout | undefined;
  await Promise.race([step, new Promise((resolve) => (bound = setTimeout(resolve, WARM_UP_LIMIT_MS).unref()))]);
  clearTimeout(bound);
}
