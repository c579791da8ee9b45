import { Injectable, SetMetadata } from '@nestjs/common';
import { WorkerOptions } from '../job/job-hash';
import { defineWorker } from '../job/worker-definition';
import { callerFileOf } from './caller-file';

export const WURK_WORKER = Symbol('wurk:worker');

/**
 * Marks a provider as a worker. `name` is the Sidekiq class string its jobs
 * carry (default: the class name); every other option is a Sidekiq option
 * copied into each payload, like `sidekiq_options`, except `capsule` and
 * `sandbox` (docs/sandboxed-workers.md), which configure this process.
 */
export function Worker(options: WorkerOptions = {}): ClassDecorator {
  // Where `@Worker(…)` is written is the module that declares the class: a sandbox thread imports that file.
  const file = callerFileOf(Worker);
  return (target) => {
    defineWorker(target, options, file);
    SetMetadata(WURK_WORKER, true)(target);
    Injectable()(target);
  };
}
