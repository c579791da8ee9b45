import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import type { RemoteSignal } from '../server/heartbeat/heartbeat-port';
import { Page, PageRequest, pipelineValues, resolvePage } from './page';
import { setMembers } from './scan';

/** One live process as its heartbeat hash describes it (Sidekiq's Process). */
export interface ProcessRecord {
  identity: string;
  hostname?: string;
  pid?: number;
  tag?: string;
  labels: string[];
  queues: string[];
  /** The `concurrency` hash field (Sidekiq 8.1.2+), else the one in `info`. */
  concurrency?: number;
  busy: number;
  /** Quiet (TSTP received) or stopping: the Web UI's "stopping". */
  quiet: boolean;
  /** Last heartbeat, epoch seconds. */
  beat?: number;
  /** Resident memory, KB. */
  rss?: number;
  rttUs?: number;
  startedAt?: number;
  version?: string;
  /** Embedded processes refuse remote quiet and stop, as in Sidekiq's Web UI. */
  embedded: boolean;
  /** `info` as stored, decoded; undefined when it does not parse. */
  info?: Record<string, unknown>;
}

/** The result of signalling processes (docs/internals/spec/contract.md §1.10 `{signal, signalled, skipped}`). */
export interface SignalResult {
  signal: RemoteSignal;
  signalled: string[];
  /** Embedded processes and identities without a live heartbeat. */
  skipped: string[];
}

const FIELDS = ['info', 'concurrency', 'busy', 'beat', 'quiet', 'rss', 'rtt_us'] as const;
/** Sidekiq's signal list lives as long as a heartbeat: a process that never reads it is gone anyway. */
const SIGNAL_TTL_SECONDS = 60;
/** How often any reader may prune `processes` (Sidekiq's `process_cleanup` throttle). */
const CLEANUP_EVERY_SECONDS = 60;

function numberOf(value: unknown): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : undefined;
}

function decodeInfo(text: string): Record<string, unknown> | undefined {
  try {
    const info = JSON.parse(text);
    return info && typeof info === 'object' && !Array.isArray(info) ? info : undefined;
  } catch {
    return undefined;
  }
}

function toProcess(identity: string, values: Array<string | null>): ProcessRecord {
  const [infoText, concurrency, busy, beat, quiet, rss, rttUs] = values;
  const info = decodeInfo(infoText as string);
  const strings = (value: unknown): string[] =>
    Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  return {
    identity,
    hostname: typeof info?.hostname === 'string' ? info.hostname : undefined,
    pid: numberOf(info?.pid),
    tag: typeof info?.tag === 'string' ? info.tag : undefined,
    labels: strings(info?.labels),
    queues: strings(info?.queues),
    concurrency: numberOf(concurrency) ?? numberOf(info?.concurrency),
    busy: numberOf(busy) ?? 0,
    quiet: quiet === 'true',
    beat: numberOf(beat),
    rss: numberOf(rss),
    rttUs: numberOf(rttUs),
    startedAt: numberOf(info?.started_at),
    version: typeof info?.version === 'string' ? info.version : undefined,
    embedded: info?.embedded === true,
    info,
  };
}

/**
 * The process registry (Sidekiq's ProcessSet): `processes` plus each
 * member's heartbeat hash. Members whose hash expired are skipped when
 * listed and pruned by `cleanup`; remote control goes through the
 * `<identity>-signals` list each process reads at its beat.
 */
export class ProcessSet {
  constructor(private readonly redis: Redis) {}

  /**
   * Removes members whose heartbeat hash is gone, at most once a minute
   * across every reader (`SET process_cleanup NX EX 60`) unless `force`.
   * Resolves to how many were removed.
   */
  async cleanup(force = false): Promise<number> {
    if (!force && (await this.redis.set(Keys.processCleanup, '1', 'EX', CLEANUP_EVERY_SECONDS, 'NX')) === null)
      return 0;
    const identities = await setMembers(this.redis, Keys.processes);
    if (identities.length === 0) return 0;
    const pipeline = this.redis.pipeline();
    for (const identity of identities) pipeline.hget(Keys.process(identity), 'info');
    const results = (await pipeline.exec()) ?? [];
    // A member whose key is not a hash (WRONGTYPE) is no heartbeat either.
    const gone = identities.filter((_, index) => results[index]?.[0] || results[index]?.[1] === null);
    if (gone.length > 0) await this.redis.srem(Keys.processes, ...gone);
    return gone.length;
  }

  /** Live processes sorted by identity, a page at a time (prunes dead entries first, throttled). */
  async list(request?: PageRequest): Promise<Page<ProcessRecord>> {
    await this.cleanup();
    const { page, count, start } = resolvePage(request);
    const identities = await setMembers(this.redis, Keys.processes);
    const records = await this.read(identities);
    return { page, count, total: records.length, items: records.slice(start, start + count) };
  }

  /**
   * One process, or null when it is not a live member. Only a member of
   * `processes` is read: a name from a URL never picks an arbitrary key, and
   * a member whose key is not a hash reads as gone rather than failing.
   */
  async get(identity: string): Promise<ProcessRecord | null> {
    if (!(await this.has(identity))) return null;
    const [record] = await this.read([identity]);
    return record ?? null;
  }

  /** Whether `processes` lists this identity (live or not yet pruned). */
  async has(identity: string): Promise<boolean> {
    return (await this.redis.sismember(Keys.processes, identity)) === 1;
  }

  /**
   * Members of `processes` (SCARD; Sidekiq's ProcessSet#size), including ones whose heartbeat expired and that no
   * `cleanup` has pruned yet.
   */
  async size(): Promise<number> {
    return this.redis.scard(Keys.processes);
  }

  /** TSTP: the process stops fetching and finishes what it runs (at its next beat). */
  quiet(identity: string): Promise<SignalResult> {
    return this.signal('TSTP', [identity]);
  }

  /** TERM: the process quiets, drains within its shutdown timeout and exits its processing. */
  stop(identity: string): Promise<SignalResult> {
    return this.signal('TERM', [identity]);
  }

  /**
   * Sends TSTP to every member of `processes` (Sidekiq's ProcessSet quiet
   * from the Web UI): pushed on each `<identity>-signals` list, read at the
   * process's next beat (within 10 s). Embedded processes and members without a
   * live heartbeat are returned as `skipped`.
   */
  async quietAll(): Promise<SignalResult> {
    return this.signal('TSTP', await setMembers(this.redis, Keys.processes));
  }

  /**
   * Sends TERM to every member of `processes`, as `quietAll` sends TSTP: each
   * process quiets, finishes or hands back its jobs within its shutdown timeout,
   * and stops processing. Embedded and expired members are `skipped`.
   */
  async stopAll(): Promise<SignalResult> {
    return this.signal('TERM', await setMembers(this.redis, Keys.processes));
  }

  private async signal(signal: RemoteSignal, identities: string[]): Promise<SignalResult> {
    const records = new Map((await this.read(identities)).map((record) => [record.identity, record]));
    const signalled = identities.filter((identity) => records.has(identity) && !records.get(identity)?.embedded);
    const skipped = identities.filter((identity) => !signalled.includes(identity));
    if (signalled.length > 0) {
      const multi = this.redis.multi();
      for (const identity of signalled)
        multi.lpush(Keys.signals(identity), signal).expire(Keys.signals(identity), SIGNAL_TTL_SECONDS);
      pipelineValues(await multi.exec());
    }
    return { signal, signalled, skipped };
  }

  /** Heartbeat hashes of these identities, skipping the ones without `info` (expired). */
  private async read(identities: string[]): Promise<ProcessRecord[]> {
    if (identities.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const identity of identities) pipeline.hmget(Keys.process(identity), ...FIELDS);
    const results = (await pipeline.exec()) ?? [];
    const records: ProcessRecord[] = [];
    identities.forEach((identity, index) => {
      const [error, values] = results[index] ?? [];
      if (!error && Array.isArray(values) && values[0] !== null)
        records.push(toProcess(identity, values as Array<string | null>));
    });
    return records;
  }
}
