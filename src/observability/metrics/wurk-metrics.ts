import type Redis from 'ioredis';
import type * as PromClient from 'prom-client';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ReliablePushStats } from '../../client/reliable-push/reliable-push-settings';
import { WurkConfigError } from '../../job/errors';
import { Keys } from '../../redis/keys';
import type { JobLifecycleListener, JobOutcome, ServerContext } from '../../server/server-middleware';
import { knownQueues, QueueGauge, readQueueGauges } from '../queue-gauges';
import { DEFAULT_MAX_LABEL_VALUES, LabelValues } from './label-values';

/**
 * The Prometheus metrics' options: the registry, the name prefix (`wurk_`), the duration buckets and the queue gauges.
 */
export interface WurkMetricsOptions {
  /** Where the metrics register (default: prom-client's global `register`). */
  registry?: Registry;
  /** Prefix of every metric name (default `wurk_`). */
  prefix?: string;
  /** Buckets of the job duration histogram, in seconds. */
  durationBuckets?: number[];
  /**
   * Report `queue_size` and `queue_latency_seconds` (default true). They are
   * cluster-wide facts, so every process reporting them reports the same
   * numbers: aggregate them with max(), or turn them off on all processes but one.
   */
  queueGauges?: boolean;
  /** Milliseconds a reading of the queues is reused across scrapes (default 5000). */
  queueGaugesCacheMs?: number;
  /**
   * Distinct values each of the `class` and `queue` labels may take (default
   * 500). Only registered workers' classes and the queues this process
   * fetches are reported by name, up to this many; any other class or queue
   * (a Ruby class pushed from here, a queue minted over HTTP) counts under
   * `other`. The queue gauges name every queue while `queues` holds at most
   * this many, else only the fetched ones.
   */
  maxLabelValues?: number;
}

/** What the metrics read at scrape time; `busy` is undefined in an app that does not process. */
export interface MetricsSubject {
  redis: Redis;
  /**
   * Jobs this process is performing now, read at each scrape for `jobs_in_flight`; undefined leaves the gauge as it was
   * (an app that does not process).
   */
  busy(): number | undefined;
  /** Whether a class is a registered worker's (reported by name); none is when absent. */
  isWorkerClass?(name: string): boolean;
  /** The queues this process fetches (reported by name); none when absent. */
  fetchedQueues?: readonly string[];
  /** Appends to the attempts log that failed since boot (docs/job-history.md); undefined when the log is off. */
  attemptsWriteFailures?(): number | undefined;
  /** Reliable push's buffer and counts (docs/reliable-push.md); absent when `client.reliablePush` is off. */
  reliablePush?(): ReliablePushStats;
}

/** The `outcome` label of `reliable_push_jobs_total`, per count of ReliablePushStats. */
const RELIABLE_PUSH_OUTCOMES = {
  delivered: 'delivered',
  expired: 'expired',
  halted: 'halted',
  inDoubt: 'in_doubt',
  droppedAtExit: 'dropped_at_exit',
  refused: 'refused',
  alreadySent: 'already_sent',
  keptAtExit: 'kept_at_exit',
} as const;

const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * wurk's Prometheus metrics. Per job, only counters and a histogram move
 * (in the lifecycle listener); everything read from Redis is read when
 * Prometheus scrapes, at most once per `queueGaugesCacheMs`, never per job.
 */
export class WurkMetrics {
  readonly registry: Registry;
  readonly listener: JobLifecycleListener;
  private readonly jobs: Counter<'class' | 'queue' | 'outcome'>;
  private readonly duration: Histogram<'class' | 'queue' | 'outcome'>;
  private readonly pushes: Counter<'class' | 'queue'>;
  private readonly collapsedPushes: Counter<'class' | 'queue' | 'policy'>;
  private cachedQueues?: { at: number; reading: Promise<Map<string, QueueGauge>> };
  private readonly classLabels: LabelValues;
  private readonly queueLabels: LabelValues;

  constructor(
    prom: typeof PromClient,
    private readonly subject: MetricsSubject,
    private readonly options: WurkMetricsOptions = {},
  ) {
    validateMetricsOptions(options);
    const registry = (this.registry = options.registry ?? prom.register);
    const cap = options.maxLabelValues ?? DEFAULT_MAX_LABEL_VALUES;
    this.classLabels = new LabelValues((name) => subject.isWorkerClass?.(name) ?? false, cap);
    // Read at each new name: the fetched queues are settled at bootstrap, after this constructor.
    this.queueLabels = new LabelValues((name) => (subject.fetchedQueues ?? []).includes(name), cap);
    const prefix = options.prefix ?? 'wurk_';
    this.jobs = reuse(
      registry,
      `${prefix}jobs_total`,
      () =>
        new prom.Counter({
          name: `${prefix}jobs_total`,
          help: 'Jobs performed by this process, by class, queue and outcome (complete, retrying, dead, failed, interrupted).',
          labelNames: ['class', 'queue', 'outcome'],
          registers: [registry],
        }),
    );
    this.duration = reuse(
      registry,
      `${prefix}job_duration_seconds`,
      () =>
        new prom.Histogram({
          name: `${prefix}job_duration_seconds`,
          help: 'Time from the start of perform (middleware included) to the job settled, by class, queue and outcome.',
          labelNames: ['class', 'queue', 'outcome'],
          buckets: options.durationBuckets ?? DEFAULT_BUCKETS,
          registers: [registry],
        }),
    );
    this.pushes = reuse(
      registry,
      `${prefix}pushes_total`,
      () =>
        new prom.Counter({
          name: `${prefix}pushes_total`,
          help: 'Jobs pushed by this process, by class and queue.',
          labelNames: ['class', 'queue'],
          registers: [registry],
        }),
    );
    this.collapsedPushes = reuse(
      registry,
      `${prefix}collapsed_pushes_total`,
      () =>
        new prom.Counter({
          name: `${prefix}collapsed_pushes_total`,
          help: 'Pushes by this process that a collapse policy folded into another job (debounce) or dropped (throttle).',
          labelNames: ['class', 'queue', 'policy'],
          registers: [registry],
        }),
    );
    // Gauges read this instance's subject when scraped, so a newer app's replace an older app's.
    const metrics = this;
    replace(
      registry,
      `${prefix}jobs_in_flight`,
      () =>
        new prom.Gauge({
          name: `${prefix}jobs_in_flight`,
          help: 'Jobs this process is performing right now.',
          registers: [registry],
          collect() {
            const busy = subject.busy();
            if (busy !== undefined) this.set(busy);
          },
        }),
    );
    replace(
      registry,
      `${prefix}attempts_log_write_failures_total`,
      () =>
        new prom.Counter({
          name: `${prefix}attempts_log_write_failures_total`,
          help: "Attempt records this process could not append to a job's attempts log (each also logged); the jobs themselves were filed.",
          registers: [registry],
          collect() {
            const failures = subject.attemptsWriteFailures?.();
            this.reset();
            if (failures !== undefined) this.inc(failures);
          },
        }),
    );
    if (subject.reliablePush) this.reliablePushMetrics(prom, registry, prefix, subject.reliablePush);
    if (options.queueGauges ?? true) {
      const size: Gauge<'queue'> = replace(
        registry,
        `${prefix}queue_size`,
        () =>
          new prom.Gauge({
            name: `${prefix}queue_size`,
            help: 'Jobs waiting in each queue (cluster-wide: the same value from every process).',
            labelNames: ['queue'],
            registers: [registry],
            async collect() {
              await metrics.collectQueues(size, latency);
            },
          }),
      );
      const latency: Gauge<'queue'> = replace(
        registry,
        `${prefix}queue_latency_seconds`,
        () =>
          new prom.Gauge({
            name: `${prefix}queue_latency_seconds`,
            help: 'Seconds the oldest job of each queue has waited (cluster-wide: the same value from every process).',
            labelNames: ['queue'],
            registers: [registry],
            async collect() {
              await metrics.collectQueues(size, latency);
            },
          }),
      );
    }
    // No onStart: the processor stamps when each execution began on its context.
    this.listener = { onSettled: (context, outcome) => this.settled(context, outcome) };
  }

  /** Read at scrape time from the push transport: what the buffer holds and what became of the jobs it took. */
  private reliablePushMetrics(
    prom: typeof PromClient,
    registry: Registry,
    prefix: string,
    stats: () => ReliablePushStats,
  ): void {
    replace(
      registry,
      `${prefix}reliable_push_buffered_jobs`,
      () =>
        new prom.Gauge({
          name: `${prefix}reliable_push_buffered_jobs`,
          help: "Jobs held in this process's reliable-push buffer, waiting for Redis.",
          registers: [registry],
          collect() {
            this.set(stats().buffered);
          },
        }),
    );
    replace(
      registry,
      `${prefix}reliable_push_jobs_total`,
      () =>
        new prom.Counter({
          name: `${prefix}reliable_push_jobs_total`,
          help:
            "What became of the jobs this process's reliable-push buffer took or refused: delivered, expired, halted " +
            '(a unique lock lost), in_doubt, dropped_at_exit, refused (buffer full, or journal not written), and in ' +
            'disk mode already_sent (recovered, found in Redis) and kept_at_exit (left in the journal).',
          labelNames: ['outcome'],
          registers: [registry],
          collect() {
            const now = stats();
            this.reset();
            for (const [count, outcome] of Object.entries(RELIABLE_PUSH_OUTCOMES))
              this.inc({ outcome }, now[count as keyof typeof RELIABLE_PUSH_OUTCOMES]);
          },
        }),
    );
  }

  /** The client's push observer. */
  readonly pushed = (className: string, queue: string, count: number): void => {
    this.pushes.inc({ class: this.classLabels.of(className), queue: this.queueLabels.of(queue) }, count);
  };

  /** Hears a push a collapse policy folded into another job (`debounce`) or dropped (`throttle`). */
  readonly collapsed = (className: string, queue: string, policy: string): void => {
    this.collapsedPushes.inc({ class: this.classLabels.of(className), queue: this.queueLabels.of(queue), policy });
  };

  private settled(context: ServerContext, outcome: JobOutcome): void {
    const labels = {
      class: this.classLabels.of(context.job.className),
      queue: this.queueLabels.of(context.queue),
      outcome: outcome.kind,
    };
    this.jobs.inc(labels);
    const { startedAt } = context;
    // A job handed back at shutdown settles through a fresh context: counted, but it has no duration.
    if (startedAt !== undefined) this.duration.observe(labels, (performance.now() - startedAt) / 1000);
  }

  /**
   * Every queue while `queues` holds at most maxLabelValues (one SCARD decides), else the fetched ones only: never
   * 50,000 series.
   */
  private async gaugedQueues(): Promise<string[]> {
    const cap = this.options.maxLabelValues ?? DEFAULT_MAX_LABEL_VALUES;
    if ((await this.subject.redis.scard(Keys.queues)) <= cap) return knownQueues(this.subject.redis);
    return [...new Set(this.subject.fetchedQueues ?? [])].sort().slice(0, cap);
  }

  /** Both queue gauges share one reading; a failed reading leaves them empty rather than failing the scrape. */
  private async collectQueues(size: Gauge<'queue'>, latency: Gauge<'queue'>): Promise<void> {
    const now = Date.now();
    if (!this.cachedQueues || now - this.cachedQueues.at > (this.options.queueGaugesCacheMs ?? 5000)) {
      const reading = this.gaugedQueues().then((queues) => readQueueGauges(this.subject.redis, queues, now));
      this.cachedQueues = { at: now, reading };
      reading.catch(() => (this.cachedQueues = undefined));
    }
    size.reset();
    latency.reset();
    let gauges: Map<string, QueueGauge>;
    try {
      gauges = await this.cachedQueues.reading;
    } catch {
      return;
    }
    for (const [queue, gauge] of gauges) {
      size.set({ queue }, gauge.size);
      latency.set({ queue }, gauge.latency);
    }
  }
}

function validateMetricsOptions(options: WurkMetricsOptions): void {
  if (
    options.maxLabelValues !== undefined &&
    !(Number.isInteger(options.maxLabelValues) && options.maxLabelValues >= 1)
  ) {
    throw new WurkConfigError('metrics.maxLabelValues', 'must be a positive integer');
  }
  if (options.prefix !== undefined && !/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(options.prefix))
    throw new WurkConfigError('metrics.prefix', 'must be a valid Prometheus metric name prefix');
  if (
    options.queueGaugesCacheMs !== undefined &&
    !(Number.isFinite(options.queueGaugesCacheMs) && options.queueGaugesCacheMs >= 0)
  ) {
    throw new WurkConfigError('metrics.queueGaugesCacheMs', 'must be a number of milliseconds >= 0');
  }
  if (
    options.durationBuckets !== undefined &&
    !(Array.isArray(options.durationBuckets) && options.durationBuckets.every((b) => typeof b === 'number' && b > 0))
  ) {
    throw new WurkConfigError('metrics.durationBuckets', 'must be an array of positive numbers of seconds');
  }
}

/** Counters keep counting across app instances in one registry: registering the same name twice would throw. */
function reuse<M>(registry: Registry, name: string, create: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create();
}

/** A gauge whose collect reads one app's state is replaced, so a closed app's state is never reported. */
function replace<M>(registry: Registry, name: string, create: () => M): M {
  registry.removeSingleMetric(name);
  return create();
}
