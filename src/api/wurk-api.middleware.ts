import { Inject, Injectable, Logger, NestMiddleware } from '@nestjs/common';
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
 * Nest glue for the HTTP API: a middleware rather than a controller, so the
 * order of checks (contract §1.2) is the API's own and runs before any guard,
 * pipe or body parser of the host app could answer first. Without the `api`
 * option it passes every request on.
 */
@Injectable()
export class WurkApiMiddleware implements NestMiddleware {
  private readonly dispatcher?: ApiDispatcher;

  constructor(
    @Inject(WURK_RESOLVED_OPTIONS) options: ResolvedWurkOptions,
    connections: RedisConnections,
    client: ClientService,
    status: StatusService,
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

  use(req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void): void {
    if (!this.dispatcher) return next();
    this.dispatcher.handle(req, res, requestPath(req)).then((handled) => {
      if (!handled) next();
    }, next);
  }
}
