import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { RedisConnections } from '../redis/connections';
import { writePolicyFor } from '../redis/durable-write';
import { enqueuedRowHook } from '../status/enqueued-row';
import { StatusListener } from '../status/status-listener';
import { StatusWriter } from '../status/status-writer';
import { isTracked } from '../status/tracked';
import { RedisPushTransport } from '../client/push-transport';
import type { PushTransport } from '../client/push-transport';
import { WURK_PUSH_TRANSPORT, WURK_RESOLVED_OPTIONS } from './tokens';
import type { ResolvedWurkOptions } from './wurk-options';

/**
 * Plugs job status into the client and the processing plane: the enqueued
 * row rides on every immediate push's pipeline, and the listener keeps the
 * row through each execution. Both skip untracked jobs before any command.
 */
@Injectable()
export class StatusHooks implements OnModuleInit {
  private readonly logger = new Logger('WurkStatus');
  readonly listener: StatusListener;

  constructor(
    connections: RedisConnections,
    @Inject(WURK_PUSH_TRANSPORT) private readonly transport: PushTransport,
    @Inject(WURK_RESOLVED_OPTIONS) private readonly options: ResolvedWurkOptions,
  ) {
    this.listener = new StatusListener(
      new StatusWriter(connections.command, {
        writes: writePolicyFor(connections.sentinel, options),
        server: () => connections.server,
      }),
      { ttl: options.statusTtl, retention: options.statusRetention, progressInterval: options.progressInterval },
      (error, jid, what) =>
        this.logger.warn(
          `status ${what} write for ${jid} failed: ${error instanceof Error ? error.message : String(error)}`,
        ),
    );
  }

  /**
   * Called by Nest: adds the `enqueued` row (HSET + EXPIRE of `status:<jid>`,
   * `statusTtl` seconds) to the pipeline of every immediate push of a tracked
   * job. Nothing is added when WURK_PUSH_TRANSPORT is not the Redis one (a
   * test's own transport): tracked jobs then get no enqueued row.
   */
  onModuleInit(): void {
    // On the transport, not on ClientService: a test that overrides
    // ClientService with a mock must still boot. isTracked lets a bulk push
    // ask once per batch (its jobs share their options).
    if (this.transport instanceof RedisPushTransport)
      this.transport.addPipelineHook(enqueuedRowHook(this.options.statusTtl), isTracked);
  }
}
