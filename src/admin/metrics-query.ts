import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { pipelineValues } from './page';

/**
 * The periods Sidekiq 8's Web UI offers on its Metrics page
 * (web/application.rb METRICS_PERIODS): up to 8 hours from the per-minute
 * hashes, 24 to 72 hours from the ten-minute rollups.
 */
export const METRICS_PERIODS = {
  '1h': { minutes: 60 },
  '2h': { minutes: 120 },
  '4h': { minutes: 240 },
  '8h': { minutes: 480 },
  '24h': { hours: 24 },
  '48h': { hours: 48 },
  '72h': { hours: 72 },
} as const;
export type MetricsPeriod = keyof typeof METRICS_PERIODS;

export function isMetricsPeriod(value: string): value is MetricsPeriod {
  return Object.prototype.hasOwnProperty.call(METRICS_PERIODS, value);
}

/** Upper bounds of the 26 histogram buckets, as Sidekiq labels them (metrics/shared.rb LABELS), fastest first. */
export const HISTOGRAM_LABELS = [
  '20ms',
  '30ms',
  '45ms',
  '65ms',
  '100ms',
  '150ms',
  '225ms',
  '335ms',
  '500ms',
  '750ms',
  '1.1s',
  '1.7s',
  '2.5s',
  '3.8s',
  '5.75s',
  '8.5s',
  '13s',
  '20s',
  '30s',
  '45s',
  '65s',
  '100s',
  '150s',
  '225s',
  '335s',
  'Slow',
] as const;

const HISTOGRAM_FETCH = HISTOGRAM_LABELS.flatMap((_, index) => ['GET', 'u16', `#${index}`]);

/**
 * One class over the period: successes and failures counted as Sidekiq does (`p` counts every run, `ms` successful ones
 * only).
 */
export interface ClassMetrics {
  class: string;
  /** Runs (Sidekiq's `p`), failed ones included. */
  processed: number;
  failed: number;
  /** Milliseconds spent in successful runs. */
  totalMs: number;
  /** `totalMs / (processed − failed)`, 0 with no success (Sidekiq's `total_avg`). */
  avgMs: number;
  /** Per bucket, oldest first, aligned with `MetricsResult.buckets`. */
  series: { processed: number[]; failed: number[]; ms: number[] };
}

export interface MetricsResult {
  period: MetricsPeriod;
  /** Seconds per bucket: 60 up to 8 hours, 600 beyond. */
  bucketSeconds: number;
  /** Each bucket's start, ISO-8601 UTC, oldest first. */
  buckets: string[];
  startsAt: string;
  endsAt: string;
}

export interface TopJobs extends MetricsResult {
  /** Busiest first (most total time, then most runs). */
  jobs: ClassMetrics[];
}

export interface JobMetrics extends MetricsResult {
  job: ClassMetrics;
  /**
   * Runs per histogram bucket over the period, in HISTOGRAM_LABELS order; null past 8 hours (histograms live 8 hours).
   */
  histogram: number[] | null;
}

interface Window {
  stride: number;
  /** Bucket start times, newest first (the order the keys are read in). */
  times: number[];
  key(epochMs: number): string;
}

function windowOf(period: MetricsPeriod, nowMs: number): Window {
  const spec: { minutes?: number; hours?: number } = METRICS_PERIODS[period];
  const stride = spec.hours ? 600_000 : 60_000;
  const count = spec.hours ? spec.hours * 6 : (spec.minutes ?? 60);
  const newest = nowMs - (nowMs % stride);
  const times = Array.from({ length: count }, (_, index) => newest - index * stride);
  return { stride, times, key: spec.hours ? Keys.metricsTenMinutesV8 : Keys.metricsMinuteV8 };
}

function resultOf(period: MetricsPeriod, window: Window): MetricsResult {
  const oldestFirst = [...window.times].reverse();
  return {
    period,
    bucketSeconds: window.stride / 1000,
    buckets: oldestFirst.map((time) => new Date(time).toISOString()),
    startsAt: new Date(oldestFirst[0]).toISOString(),
    endsAt: new Date(window.times[0] + window.stride).toISOString(),
  };
}

function emptyClass(className: string, size: number): ClassMetrics {
  const zeros = () => new Array<number>(size).fill(0);
  return {
    class: className,
    processed: 0,
    failed: 0,
    totalMs: 0,
    avgMs: 0,
    series: { processed: zeros(), failed: zeros(), ms: zeros() },
  };
}

/** Adds one bucket's `p`/`f`/`ms` counter; any other field (a future Sidekiq's) is ignored, not an error. */
function addCounter(metrics: ClassMetrics, metric: string, index: number, value: number): void {
  if (!Number.isFinite(value)) return;
  if (metric === 'p') {
    metrics.processed += value;
    metrics.series.processed[index] += value;
  } else if (metric === 'f') {
    metrics.failed += value;
    metrics.series.failed[index] += value;
  } else if (metric === 'ms') {
    metrics.totalMs += value;
    metrics.series.ms[index] += value;
  }
}

function finish(metrics: ClassMetrics): ClassMetrics {
  const completed = metrics.processed - metrics.failed;
  return { ...metrics, avgMs: completed > 0 ? metrics.totalMs / completed : 0 };
}

/**
 * Reads the execution metrics wurk and Sidekiq 8 write on every beat
 * (Sidekiq 8.1's Metrics::Query `top_jobs` and `for_job`), from the 8.x key
 * names: wurk writes both 7.x and 8.x names, so reading one counts each run
 * once. A Ruby Sidekiq 7.x process writes only 7.x names, so its runs are not
 * here (its own Web UI shows them). All times UTC.
 */
export class MetricsQuery {
  constructor(private readonly redis: Redis) {}

  /**
   * Every class that ran in the period; `classFilter` keeps names containing it, case-insensitively (Sidekiq's
   * `substr`).
   */
  async topJobs(period: MetricsPeriod, options: { classFilter?: string; nowMs?: number } = {}): Promise<TopJobs> {
    const window = windowOf(period, options.nowMs ?? Date.now());
    const pipeline = this.redis.pipeline();
    for (const time of window.times) pipeline.hgetall(window.key(time));
    const hashes = pipelineValues(await pipeline.exec()) as Array<Record<string, string>>;
    const size = window.times.length;
    const filter = options.classFilter?.toLowerCase();
    const byClass = new Map<string, ClassMetrics>();
    hashes.forEach((hash, newestIndex) => {
      for (const [field, value] of Object.entries(hash ?? {})) {
        // Split at the last bar: the metric is the suffix, a class name may itself hold a bar.
        const bar = field.lastIndexOf('|');
        if (bar <= 0) continue;
        const className = field.slice(0, bar);
        if (filter && !className.toLowerCase().includes(filter)) continue;
        let metrics = byClass.get(className);
        if (!metrics) byClass.set(className, (metrics = emptyClass(className, size)));
        addCounter(metrics, field.slice(bar + 1), size - 1 - newestIndex, Number(value));
      }
    });
    const jobs = [...byClass.values()]
      .map(finish)
      .sort((a, b) => b.totalMs - a.totalMs || b.processed - a.processed || a.class.localeCompare(b.class));
    return { ...resultOf(period, window), jobs };
  }

  /** One class's counters per bucket, and its run-time histogram when the period is 8 hours or less. */
  async forJob(className: string, period: MetricsPeriod, options: { nowMs?: number } = {}): Promise<JobMetrics> {
    const window = windowOf(period, options.nowMs ?? Date.now());
    const minutely = window.stride === 60_000;
    const pipeline = this.redis.pipeline();
    for (const time of window.times) {
      pipeline.hmget(window.key(time), `${className}|p`, `${className}|f`, `${className}|ms`);
      if (minutely) pipeline.call('BITFIELD_RO', Keys.metricsHistogramV8(className, time), ...HISTOGRAM_FETCH);
    }
    const values = pipelineValues(await pipeline.exec());
    const size = window.times.length;
    const metrics = emptyClass(className, size);
    const histogram = minutely ? new Array<number>(HISTOGRAM_LABELS.length).fill(0) : null;
    const perBucket = minutely ? 2 : 1;
    window.times.forEach((_, newestIndex) => {
      const index = size - 1 - newestIndex;
      const [p, f, ms] = values[newestIndex * perBucket] as Array<string | null>;
      if (p !== null) addCounter(metrics, 'p', index, Number(p));
      if (f !== null) addCounter(metrics, 'f', index, Number(f));
      if (ms !== null) addCounter(metrics, 'ms', index, Number(ms));
      if (histogram)
        (values[newestIndex * perBucket + 1] as number[]).forEach(
          (count, bucket) => (histogram[bucket] += Number(count) || 0),
        );
    });
    return { ...resultOf(period, window), job: finish(metrics), histogram };
  }
}
