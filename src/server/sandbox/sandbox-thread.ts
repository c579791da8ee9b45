/**
 * The entry of a sandbox thread: imports the module that declares one
 * worker class, constructs it without dependency injection, and performs
 * one job at a time for its pool. Loaded by file path (compiled, or through
 * a TypeScript loader from source; see sandbox-entry.ts).
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { errorClassOf, errorMessageOf } from '../retry/error-fields';
import type { PerformRequest, SandboxThreadData, ThreadMessage } from './sandbox-protocol';

interface Performer {
  perform(...args: unknown[]): unknown;
}

const port = parentPort;
if (port) start(port, workerData as SandboxThreadData);

function start(parent: NonNullable<typeof parentPort>, data: SandboxThreadData): void {
  const send = (message: ThreadMessage) => parent.postMessage(message);
  let worker: Performer;
  try {
    worker = load(data);
  } catch (error) {
    send({ kind: 'load-failed', reason: errorMessageOf(error) });
    return;
  }
  parent.on('message', (request: PerformRequest) => void performOne(worker, request, send));
  send({ kind: 'ready', threadId });
}

function load({ file, exportName }: SandboxThreadData): Performer {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const exported = require(file) as Record<string, unknown>;
  const found = [exported[exportName], exported.default, ...Object.values(exported)].find(
    (value): value is new () => Performer => typeof value === 'function' && value.name === exportName,
  );
  if (!found) throw new Error(`${file} does not export a class named ${exportName}`);
  if (typeof found.prototype?.perform !== 'function') throw new Error(`${exportName} has no perform() method`);
  return new found();
}

async function performOne(worker: Performer, request: PerformRequest, send: (message: ThreadMessage) => void) {
  let result: unknown;
  try {
    result = await worker.perform(...request.args);
  } catch (error) {
    send({ kind: 'failed', error: crossed(error) });
    return;
  }
  try {
    send({ kind: 'done', result });
  } catch (cloneError) {
    // A function, a socket, a class instance with private state: the job did its work but its result cannot cross.
    send({ kind: 'failed', error: crossed(cloneError) });
  }
}

function crossed(error: unknown) {
  let stack: string | undefined;
  try {
    stack = error instanceof Error && typeof error.stack === 'string' ? error.stack : undefined;
  } catch {
    stack = undefined;
  }
  return { className: errorClassOf(error), message: errorMessageOf(error), stack };
}
