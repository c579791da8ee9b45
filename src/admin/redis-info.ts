import type Redis from 'ioredis';

/** What Sidekiq's Web UI shows of its Redis in the dashboard footer (web/application.rb REDIS_KEYS), plus the mode. */
export interface RedisFacts {
  version: string | null;
  /** Server mode as INFO names it: standalone, cluster or sentinel. */
  mode: string | null;
  uptimeInDays: number | null;
  connectedClients: number | null;
  usedMemoryHuman: string | null;
  usedMemoryPeakHuman: string | null;
  /** Why the facts are missing, e.g. a managed Redis that renamed or disabled INFO. */
  error: string | null;
}

function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

function integerOf(value: string | undefined): number | null {
  return value !== undefined && /^[0-9]+$/.test(value) ? Number(value) : null;
}

/**
 * Reads Redis's INFO (server, clients, memory sections only). An INFO the
 * server refuses is reported in `error`, not raised: a footer is not worth
 * a failed page.
 */
export class RedisInfo {
  constructor(private readonly redis: Redis) {}

  async facts(): Promise<RedisFacts> {
    let fields: Map<string, string>;
    try {
      const sections = await Promise.all(['server', 'clients', 'memory'].map((section) => this.redis.info(section)));
      fields = parseInfo(sections.join('\r\n'));
    } catch (error) {
      return {
        version: null,
        mode: null,
        uptimeInDays: null,
        connectedClients: null,
        usedMemoryHuman: null,
        usedMemoryPeakHuman: null,
        error: (error as Error).message,
      };
    }
    return {
      version: fields.get('redis_version') ?? fields.get('valkey_version') ?? null,
      mode: fields.get('redis_mode') ?? fields.get('server_mode') ?? null,
      uptimeInDays: integerOf(fields.get('uptime_in_days')),
      connectedClients: integerOf(fields.get('connected_clients')),
      usedMemoryHuman: fields.get('used_memory_human') ?? null,
      usedMemoryPeakHuman: fields.get('used_memory_peak_human') ?? null,
      error: null,
    };
  }
}
