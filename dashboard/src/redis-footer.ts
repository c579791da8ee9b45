import type { Api } from './api.js';
import { h, replace } from './dom.js';

interface RedisFacts {
  version: string | null;
  mode: string | null;
  uptime_in_days: number | null;
  connected_clients: number | null;
  used_memory_human: string | null;
  used_memory_peak_human: string | null;
  error: string | null;
}

/**
 * Redis's version, uptime, clients and memory under every page, as Sidekiq's dashboard shows them; silent if the API
 * refuses.
 */
export async function redisFooter(api: Api, footer: HTMLElement): Promise<void> {
  let facts: RedisFacts;
  try {
    facts = await api.get<RedisFacts>('/redis');
  } catch {
    return footer.replaceChildren();
  }
  const fact = (label: string, value: string | number | null) =>
    value === null
      ? null
      : h('span', { class: 'fact' }, h('span', { class: 'muted' }, label), ' ', h('strong', {}, String(value)));
  replace(
    footer,
    fact('Redis', facts.version),
    fact('mode', facts.mode),
    fact('uptime (days)', facts.uptime_in_days),
    fact('clients', facts.connected_clients),
    fact('memory', facts.used_memory_human),
    fact('peak', facts.used_memory_peak_human),
    facts.error ? h('span', { class: 'muted' }, `Redis INFO unavailable: ${facts.error}`) : null,
  );
}
