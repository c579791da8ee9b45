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
import { WurkConfigError } from '../job/errors';

/** Names Nest's Express adapter gives the body parsers it installs by default. */
const DEFAULT_PARSERS = ['jsonParser', 'urlencodedParser'];

/**
 * Nest's default parsers are installed before any module's middleware, so
 * they would read (and cap, and refuse with their own pages) every API body
 * first. Refusing to start says so once, instead of a 500 on every POST.
 */
function assertNoBodyParserFirst(adapter: object): void {
  const applied = (adapter as { isMiddlewareApplied?: (name: string) => boolean }).isMiddlewareApplied;
  if (typeof applied !== 'function') return;
  if (DEFAULT_PARSERS.some((name) => applied.call(adapter, name))) {
    throw new WurkConfigError(
      'api',
      "needs the app's default body parser off: NestFactory.create(AppModule, { bodyParser: false }), then app.use(excludeWurkApi(mount, express.json())) for your own routes",
    );
  }
}

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
    assertNoBodyParserFirst(adapter);
    this.attached = true;
    const dispatcher = this.dispatcher;
    adapter.use((req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => {
      dispatcher.handle(req, res, requestPath(req)).then((handled) => {
        if (!handled) next();
      }, next);
    });
  }
}
