import { Injectable } from '@nestjs/common';
import { RedisConnections } from '../redis/connections';
import { carriesUniqueFor, uniqueClientMiddleware } from '../unique/unique-client';
import { UniqueLockListener } from '../unique/unique-lock-listener';
import { ReliablePushTransport } from '../client/reliable-push/reliable-push-transport';
import { ClientService } from './client.service';

/**
 * Unique jobs on both planes: the lock is taken by a client middleware that
 * only runs for payloads carrying `unique_for` (every other push, bulk
 * included, keeps its fast path), and released by a job lifecycle listener.
 * WurkLifecycle installs both, the middleware after the app's own.
 */
@Injectable()
export class UniqueHooks {
  readonly listener: UniqueLockListener;

  constructor(
    private readonly connections: RedisConnections,
    private readonly client: ClientService,
  ) {
    this.listener = new UniqueLockListener(connections.command);
  }

  /** With reliable push, a lock Redis cannot take now is taken when the buffered job is sent. */
  installClientMiddleware(): void {
    const transport = this.client.transport;
    const deferral = transport instanceof ReliablePushTransport ? transport : undefined;
    this.client.use(uniqueClientMiddleware(this.connections.command, deferral), carriesUniqueFor);
  }
}
