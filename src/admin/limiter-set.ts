import type Redis from 'ioredis';
import type { LimiterKind } from '../limiter/limiter-registry';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import { limitsOf, useReader, type LimiterLimits } from './limiter-use';
import { Page, PageRequest, pipelineValues, resolvePage } from './page';
import { setMembers } from './scan';

/** One registered limiter as the registry and its state say (the Web UI's Limits tab). */
export interface LimiterInfo {
  name: string;
  /** `concurrent`, `window`, `bucket`, `leaky`, `points`, or what a Ruby process wrote (e.g. `unlimited`). */
  kind: LimiterKind | string;
  /** Undefined when this version cannot read the entry's options. */
  limits?: LimiterLimits;
  /** Slots held, admissions counted, drops in the bucket or points spent now; undefined without limits. */
  used?: number;
  /** The limiter's last use, epoch seconds (undefined when a Ruby process registered it: it keeps none). */
  lastUsed?: number;
  /** The registry options as stored (Wurk's field names); undefined when they do not parse. */
  options?: Record<string, unknown>;
}

/** Which limiters to list: `filter` keeps names containing it, ignoring case. */
export interface LimiterListRequest extends PageRequest {
  filter?: string;
}

/** Names whose registry hash is checked in one pipeline, and swept in one script call. */
const BATCH = 500;

function parseOptions(text: string | undefined): Record<string, unknown> | undefined {
  try {
    const options = JSON.parse(text ?? '');
    return options && typeof options === 'object' && !Array.isArray(options) ? options : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The limiter registry (`lmtr-list`, `lmtr:<name>`) that Sidekiq Enterprise's Web UI and Wurk's dashboard read:
 * every limiter used within its ttl, by name, with its limits and current use.
 */
export class LimiterSet {
  constructor(private readonly redis: Redis) {}

  /**
   * A page of the registered limiters, by name. Names whose registry hash expired (unused for their ttl) are swept
   * from `lmtr-list` on the way, so the set does not grow for ever with interpolated names nobody uses.
   */
  async list(request: LimiterListRequest = {}): Promise<Page<LimiterInfo>> {
    const { page, count, start } = resolvePage(request);
    const needle = request.filter?.toLowerCase() ?? '';
    const matching = (await setMembers(this.redis, Keys.limiterList)).filter((name) =>
      name.toLowerCase().includes(needle),
    );
    const live = await this.sweepExpired(matching);
    const items = await this.read(live.slice(start, start + count));
    return { page, count, total: live.length, items };
  }

  private async sweepExpired(names: string[]): Promise<string[]> {
    const live: string[] = [];
    for (let i = 0; i < names.length; i += BATCH) {
      const batch = names.slice(i, i + BATCH);
      const pipeline = this.redis.pipeline();
      for (const name of batch) pipeline.exists(Keys.limiterMeta(name));
      const exists = pipelineValues(await pipeline.exec());
      const gone = batch.filter((_, j) => exists[j] === 0);
      live.push(...batch.filter((_, j) => exists[j] !== 0));
      if (gone.length === 0) continue;
      // The script drops a name only while its hash is still missing: one used meanwhile stays listed.
      await runScript(this.redis, 'limiter_registry_sweep', [Keys.limiterList, ...gone.map(Keys.limiterMeta)], gone);
    }
    return live;
  }

  private async read(names: string[]): Promise<LimiterInfo[]> {
    if (names.length === 0) return [];
    const pipeline = this.redis.pipeline().time();
    for (const name of names) pipeline.hgetall(Keys.limiterMeta(name));
    const [clock, ...metas] = pipelineValues(await pipeline.exec()) as [[string, string], ...Record<string, string>[]];
    const now = Number(clock[0]) + Number(clock[1]) / 1e6;
    const infos = names.map((name, i) => this.describe(name, metas[i]));
    const state = this.redis.pipeline();
    const readers = infos.map((info) => {
      const reader = info.limits && useReader(info.kind, info.limits);
      reader?.queue(state, info.name, now);
      return reader;
    });
    const replies = readers.some(Boolean) ? pipelineValues(await state.exec()) : [];
    let next = 0;
    readers.forEach((reader, i) => {
      if (!reader) return;
      infos[i].used = Math.round(reader.read([replies[next++]], now) * 100) / 100;
    });
    return infos;
  }

  private describe(name: string, meta: Record<string, string>): LimiterInfo {
    const options = parseOptions(meta.options);
    const lastUsed = Number(meta.last_used);
    return {
      name,
      kind: meta.type ?? 'unknown',
      limits: options && limitsOf(meta.type, options),
      lastUsed: meta.last_used && Number.isFinite(lastUsed) ? lastUsed : undefined,
      options,
    };
  }
}
