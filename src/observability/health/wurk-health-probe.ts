import type Redis from 'ioredis';
import { WurkConfigError } from '../../job/errors';
import { readQueueGauges } from '../queue-gauges';

/** Options of the health checks (`WurkHealthModule.forRoot`). */
export interface WurkHealthOptions {
  /**
   * Seconds the oldest job of a queue may wait before the queue counts as late: one number, or per queue (default 60).
   */
  queueLatency?: number | Record<string, number>;
  /**
   * Seconds since the heartbeat thread last beat before liveness fails (default: 3 heartbeat intervals, at least 30).
   */
  maxHeartbeatAge?: number;
  /** Milliseconds a Redis probe may take before Redis counts as unreachable (default 1000). */
  timeout?: number;
}

/** What the probe needs from this process's processing plane; all undefined in a producer-only app. */
export interface HealthSubject {
  redis: Redis;
  /** Undefined when this app does not process jobs. */
  processing?: {
    queues: string[];
    concurrency: number;
    busy: number;
    running: boolean;
    quiet: boolean;
    heartbeatInterval: number;
    lastBeat: { attemptedAt?: number; succeededAt?: number };
  };
  draining: boolean;
}

/**
 * What a health check found: Redis, the heartbeat, the processors and queue latency, with every number behind the
 * verdict.
 */
export interface WurkHealthReport {
  redis: { reachable: boolean; rttMs: number | null; error?: string };
  heartbeat: { ageSeconds: number | null; lastAttemptAgeSeconds: number | null } | null;
  processors: { running: boolean; quiet: boolean; busy: number; concurrency: number } | null;
  queues: Record<string, { latency: number; size: number; threshold: number; late: boolean }>;
  draining: boolean;
}

const DEFAULT_QUEUE_LATENCY = 60;
const DEFAULT_TIMEOUT_MS = 1000;

export function validateHealthOptions(options: WurkHealthOptions): void {
  const { queueLatency, maxHeartbeatAge, timeout } = options;
  const positive = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value > 0;
  if (
    queueLatency !== undefined &&
    !positive(queueLatency) &&
    !(typeof queueLatency === 'object' && queueLatency !== null && Object.values(queueLatency).every(positive))
  ) {
    throw new WurkConfigError('health.queueLatency', 'must be a number of seconds > 0, or an object of them by queue');
  }
  if (maxHeartbeatAge !== undefined && !positive(maxHeartbeatAge))
    throw new WurkConfigError('health.maxHeartbeatAge', 'must be a number of seconds > 0');
  if (timeout !== undefined && !positive(timeout))
    throw new WurkConfigError('health.timeout', 'must be a number of milliseconds > 0');
}

/**
 * The health of one wurk process, read in one PING and one pipelined queue
 * reading. Each answer is a fact with its number (RTT, ages, latencies), so
 * a probe's output says why it failed, not just that it did.
 */
export class WurkHealthProbe {
  constructor(
    private readonly subject: () => HealthSubject,
    private readonly options: WurkHealthOptions = {},
  ) {
    validateHealthOptions(options);
  }

  /**
   * Reads this process's health now: one PING (RTT in ms) and one pipeline of
   * each worked queue's size and latency (seconds), both bounded by `timeout`;
   * heartbeat ages in seconds from the last beat attempted and accepted.
   * Never throws: Redis away is `redis.reachable: false` with its error.
   */
  async report(): Promise<WurkHealthReport> {
    const subject = this.subject();
    const now = Date.now();
    const report: WurkHealthReport = {
      redis: { reachable: false, rttMs: null },
      heartbeat: null,
      processors: null,
      queues: {},
      draining: subject.draining,
    };
    const processing = subject.processing;
    if (processing) {
      const age = (at: number | undefined) => (at === undefined ? null : (now - at) / 1000);
      report.heartbeat = {
        ageSeconds: age(processing.lastBeat.succeededAt),
        lastAttemptAgeSeconds: age(processing.lastBeat.attemptedAt),
      };
      report.processors = {
        running: processing.running,
        quiet: processing.quiet,
        busy: processing.busy,
        concurrency: processing.concurrency,
      };
    }
    try {
      const started = performance.now();
      await this.withTimeout(subject.redis.ping());
      report.redis = { reachable: true, rttMs: round(performance.now() - started) };
      const gauges = await this.withTimeout(readQueueGauges(subject.redis, processing?.queues ?? [], now));
      for (const [queue, { size, latency }] of gauges) {
        const threshold = this.latencyThreshold(queue);
        report.queues[queue] = { latency: round(latency), size, threshold, late: latency > threshold };
      }
    } catch (error) {
      report.redis = { reachable: false, rttMs: null, error: error instanceof Error ? error.message : String(error) };
    }
    return report;
  }

  /**
   * Healthy: Redis answers, processors run (when this app processes), no queue is late, and the heartbeat reaches
   * Redis.
   */
  isHealthy(report: WurkHealthReport): boolean {
    if (!report.redis.reachable) return false;
    if (Object.values(report.queues).some((queue) => queue.late)) return false;
    if (report.processors && !report.processors.running) return false;
    return (
      report.heartbeat === null ||
      (report.heartbeat.ageSeconds !== null && report.heartbeat.ageSeconds <= this.maxHeartbeatAge())
    );
  }

  /**
   * Liveness asks only "is this process stuck?": its heartbeat thread still
   * beats (whether or not Redis accepts the beat), so an outage of Redis
   * never makes Kubernetes restart every pod at once.
   */
  isLive(report: WurkHealthReport): boolean {
    if (report.heartbeat === null) return true;
    const age = report.heartbeat.lastAttemptAgeSeconds;
    return age !== null && age <= this.maxHeartbeatAge();
  }

  /** Ready for work: not draining, Redis answers, and the processors run. */
  isReady(report: WurkHealthReport): boolean {
    return !report.draining && report.redis.reachable && (report.processors === null || report.processors.running);
  }

  private maxHeartbeatAge(): number {
    const interval = this.subject().processing?.heartbeatInterval ?? 10;
    return this.options.maxHeartbeatAge ?? Math.max(30, 3 * interval);
  }

  private latencyThreshold(queue: string): number {
    const option = this.options.queueLatency;
    if (typeof option === 'number') return option;
    return option?.[queue] ?? DEFAULT_QUEUE_LATENCY;
  }

  private withTimeout<T>(promise: Promise<T>): Promise<T> {
    const ms = this.options.timeout ?? DEFAULT_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
