import { WurkConfigError } from '../../job/errors';
import type { WorkerOptions } from '../../job/job-hash';
import { DEFAULT_SANDBOX_GRACE_MS, sandboxOptionsOf } from '../../job/sandbox-options';
import type { WorkerClass } from '../../job/worker-definition';
import type { SandboxPoolSpec } from './sandbox-pool';

/** What the pool of a sandboxed class is built from. */
export interface SandboxedClass {
  /** The Sidekiq class string. */
  name: string;
  target: WorkerClass;
  options: WorkerOptions;
  /** The file `@Worker` was applied in, when the decorator could tell. */
  declaredIn: string | undefined;
  /** Threads when `sandbox.pool` is not set: the concurrency of the class's capsule. */
  defaultSize: number;
}

/**
 * The pool spec of a sandboxed class, or undefined for an in-process one.
 * Refuses, naming the class, what a thread cannot do: construct a class
 * whose constructor takes dependencies (a thread has no Nest container),
 * or import a class whose declaring file is unknown.
 */
export function sandboxPoolSpec(worker: SandboxedClass): SandboxPoolSpec | undefined {
  const sandbox = sandboxOptionsOf(worker.options.sandbox);
  if (!sandbox) return undefined;
  const where = `@Worker(${worker.name}).sandbox`;
  const { target } = worker;
  if (constructorArity(target) > 0) {
    throw new WurkConfigError(
      where,
      `needs a class the thread can construct without dependency injection, but ${target.name}'s constructor ` +
        'takes parameters; move what it injects into the job args, or run it in-process',
    );
  }
  const file = sandbox.file ?? worker.declaredIn;
  if (file === undefined) {
    throw new WurkConfigError(
      where,
      `cannot tell which file declares ${target.name}; set sandbox: { file: __filename } in that file`,
    );
  }
  return {
    workerName: worker.name,
    file,
    exportName: target.name,
    size: sandbox.pool ?? worker.defaultSize,
    graceMs: sandbox.grace ?? DEFAULT_SANDBOX_GRACE_MS,
    resourceLimits: sandbox.resourceLimits,
  };
}

/** Declared parameters: TypeScript's emitted metadata when present (what Nest would inject), else `length`. */
function constructorArity(target: WorkerClass): number {
  const reflect = Reflect as unknown as { getMetadata?: (key: string, target: object) => unknown };
  const types = reflect.getMetadata?.('design:paramtypes', target);
  return Math.max(Array.isArray(types) ? types.length : 0, target.length);
}
