import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { RedisConnections } from '../redis/connections';
import { ClientService } from './client.service';
import { resolveEntry } from './resolve-entry';
import { WURK_RESOLVED_OPTIONS } from './tokens';
import type { ResolvedWurkOptions } from './wurk-options';

/**
 * Starts and stops wurk with the application. Connections close last, in
 * `onApplicationShutdown`, so jobs still draining can push follow-up jobs.
 */
@Injectable()
export class WurkLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly connections: RedisConnections,
    private readonly client: ClientService,
    @Inject(WURK_RESOLVED_OPTIONS) private readonly options: ResolvedWurkOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    for (const entry of this.options.clientMiddleware) {
      this.client.use(await resolveEntry(this.moduleRef, entry));
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.connections.close();
  }
}
