import { Injectable, Logger } from '@nestjs/common';
import { carriesCollapse, collapseClientMiddleware, CollapsedPush } from '../collapse/collapse-client';
import { RedisConnections } from '../redis/connections';
import { ClientService } from './client.service';

/**
 * Ruby Wurk's collapse policies (`collapse: { policy: 'debounce' | 'throttle', … }`), applied by a client middleware
 * that only runs for payloads carrying `collapse`: every other push, bulk included, keeps its fast path. WurkLifecycle
 * installs it innermost, after the app's own middleware. Nothing to release on the server side: a debounce burst ends
 * when its member leaves `schedule`, and a throttle slot is a fixed window of the clock.
 */
@Injectable()
export class CollapseHooks {
  private readonly logger = new Logger('WurkCollapse');
  private readonly observers: Array<(push: CollapsedPush) => void> = [];

  constructor(
    private readonly connections: RedisConnections,
    private readonly client: ClientService,
  ) {}

  installClientMiddleware(): void {
    this.client.use(
      collapseClientMiddleware(this.connections.command, (push) => this.collapsed(push)),
      carriesCollapse,
    );
  }

  /** Adds a listener of collapsed pushes (the metrics module's counter). */
  onCollapsed(observer: (push: CollapsedPush) => void): void {
    this.observers.push(observer);
  }

  private collapsed(push: CollapsedPush): void {
    this.logCollapsed(push);
    for (const observer of this.observers) observer(push);
  }

  // Debug, never more: a burst is many pushes by design, and each one lands here.
  private logCollapsed(push: CollapsedPush): void {
    this.logger.debug(
      push.policy === 'debounce'
        ? `debounced ${push.className} (jid ${push.jid}) ${push.replaced ? 'replaced the pending job' : 'opened a burst'}`
        : `throttled ${push.className} (jid ${push.jid}) dropped: jid ${push.holder} holds the slot`,
    );
  }
}
