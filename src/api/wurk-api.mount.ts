import { Inject, Injectable, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ClientService } from '../nest/client.service';
import { StatusService } from '../nest/status.service';
import { WURK_RESOLVED_OPTIONS } from '../nest/tokens';
import type { ResolvedWurkOptions } from '../nest/wurk-options';
import { RedisConnections } from '../redis/connections';
import { resolveApiOptions } from './api-options';
import { ApiDispatcher } from './api-dispatcher';
import { requestPath } from './exclude-wurk-api';

/**
 * Nest glue for the HTTP API: one plain handler on the HTTP adapter, placed
 * ahead of every route, rather than a controller or a Nest middleware. So
 * the order of checks (contract §1.2) is the API's own and runs before any
 * guard, pipe or filter could answer first, and no router decodes the path
 * before it (a bad escape like `%zz` would otherwise be the framework's 400,
 * not a problem document). Without the `api` option nothing is attached.
 */
@Injectable()
export class WurkApiMount {
  private readonly dispatcher?: ApiDispatcher;
  private attached = false;

  constructor(
    @Inject(WURK_RESOLVED_OPTIONS) options: ResolvedWurkOptions,
    connections: RedisConnections,
    client: ClientService,
    status: StatusService,
    private readonly adapterHost: HttpAdapterHost,
  ) {
    if (options.api === undefined) return;
    this.dispatcher = new ApiDispatcher({
      options: resolveApiOptions(options.api),
      redis: connections.command,
      client,
      status,
      logger: new Logger('WurkApi'),
    });
  }

  /**
   * Called while Nest registers middleware, i.e. after the adapter exists
   * (also for Test.createTestingModule apps) and before any route is bound.
   */
  attach(): void {
    const adapter = this.adapterHost.httpAdapter;
    if (!this.dispatcher || !adapter || this.attached) return;
    this.attached = true;
    const dispatcher = this.dispatcher;
    adapter.use((req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => {
      dispatcher.handle(req, res, requestPath(req)).then((handled) => {
        if (!handled) next();
      }, next);
    });
  }
}
