import { Heartbeat } from '../../src/server/heartbeat/heartbeat';
import type { RemoteSignal } from '../../src/server/heartbeat/heartbeat-port';
import type { ProcessIdentity } from '../../src/server/identity';

/**
 * A real heartbeat of a made-up process ("billing", label "blue", 10
 * threads on critical and default, weights 2:1), beating every 200 ms and
 * pushing the signals it receives onto `received`: what the readers of the
 * process registry (wurk's admin API, Sidekiq's API and Web UI) are tested
 * against. Stop it with `stop()`.
 */
export async function startLiveHeartbeat(
  url: string,
  identity: ProcessIdentity,
  received: RemoteSignal[],
): Promise<Heartbeat> {
  const heartbeat = new Heartbeat({
    redis: { url },
    identity,
    info: {
      tag: 'billing',
      labels: ['blue'],
      concurrency: 10,
      queues: ['critical', 'default'],
      weights: [{ critical: 2, default: 1 }],
      version: '0.1.0',
      startedAt: Date.now() / 1000 - 60,
    },
    interval: 0.2,
    ttl: 60,
  });
  heartbeat.onSignal((signal) => received.push(signal));
  await heartbeat.start();
  return heartbeat;
}
