/**
 * A sandboxed worker whose module throws when a thread imports it: the boot check must refuse it by name.
 */
import 'reflect-metadata';
import { isMainThread } from 'node:worker_threads';
import { Worker } from '../../src/nest/worker.decorator';

if (!isMainThread) throw new Error('this module reads a connection only the main thread has');

@Worker({ sandbox: true })
export class UnloadableSandboxJob {
  perform(): void {}
}
