import { Injectable, SetMetadata } from '@nestjs/common';
import { WorkerOptions } from '../job/job-hash';
import { defineWorker } from '../job/worker-definition';

export const WURK_WORKER = Symbol('wurk:worker');

/**
 * Marks a provider as a worker. `name` is the Sidekiq class string its jobs
 * carry (default: the class name); every other option is a Sidekiq option
 * copied into each payload, like `sidekiq_options`.
 */
export function Worker(options: WorkerOptions = {}): ClassDecorator {
  return (target) => {
    defineWorker(target, options);
    SetMetadata(WURK_WORKER, true)(target);
    Injectable()(target);
  };
}
