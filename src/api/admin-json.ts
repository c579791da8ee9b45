/**
 * The admin API's wire forms: how each admin record (a job, a set entry, a batch, a process, metrics, a cron entry)
 * is written as JSON, in Sidekiq's snake_case, with an absent value as null and a stored payload as its own bytes.
 * The handlers (admin.routes.ts) decide what to read; this file only says how it looks on the wire.
 */
import { displayPayloadText } from '../admin/job-record';
import type { SortedEntry, JobRecord } from '../admin/job-record';
import type { JobLocation } from '../admin/job-locator';
import { ClassMetrics, METRICS_PERIODS, MetricsResult } from '../admin/metrics-query';
import type { ProcessRecord, SignalResult } from '../admin/process-set';
import { STALE_AFTER_SECONDS } from '../admin/health';
import type { BatchDetails, BatchSummary } from '../admin/batch-set';
import type { BatchStatus } from '../batch/batch-status';
import { entryId } from '../job/jid';
import { RawJson } from './raw-json';

/**
 * The stored payload, as its bytes when it parsed (a Ruby `1.0` stays
 * `1.0`; an encrypted job's sealed argument shown as `[encrypted data]`),
 * else null with the reason: a malformed entry is listed, not an error.
 */
export function jobJson(record: JobRecord): Record<string, unknown> {
  return {
    jid: record.jid ?? null,
    class: record.displayClass ?? null,
    queue: record.queue ?? null,
    enqueued_at: record.enqueuedAt ?? null,
    created_at: record.createdAt ?? null,
    retry_count: record.retryCount ?? null,
    error_class: record.errorClass ?? null,
    error_message: record.errorMessage ?? null,
    payload: record.payload ? new RawJson(displayPayloadText(record)) : null,
    ...(record.parseError === undefined ? {} : { parse_error: record.parseError, raw: record.raw }),
  };
}

/** A batch of a list in the wire's snake_case: its hash's counters and times, no jid sets. */
export function batchSummaryJson(summary: BatchSummary): Record<string, unknown> {
  return wireFields(summary, BATCH_SUMMARY_FIELDS);
}

/** What the batch's page shows beside its status: tags, callbacks and which fired, failing jids, time to live. */
export function batchDetailsJson(details: BatchDetails | null): Record<string, unknown> {
  return {
    tags: details?.tags ?? [],
    callbacks: (details?.callbacks ?? []).map((callback) =>
      wireFields(callback, ['event', 'target', 'options', 'fired', 'firedAt']),
    ),
    failed_jids: details?.failedJids ?? [],
    expires_in: details?.expiresIn ?? null,
  };
}

/** A batch in the wire's snake_case, as Wurk's HTTP API answers it. */
export function batchJson(status: BatchStatus): Record<string, unknown> {
  return {
    bid: status.bid,
    description: status.description,
    created_at: status.createdAt,
    callback_queue: status.callbackQueue,
    callback_class: status.callbackClass,
    parent_bid: status.parentBid,
    total: status.total,
    pending: status.pending,
    failures: status.failures,
    complete: status.complete,
    success: status.success,
    death: status.death,
    complete_at: status.completeAt,
    success_at: status.successAt,
    death_at: status.deathAt,
    jids: status.jids,
    dead_jids: status.deadJids,
    invalidated: status.invalidated,
    children: status.children,
    pending_children: status.pendingChildren,
    failure_info: status.failureInfo.map(({ jid, errorClass, errorMessage }) => ({
      jid,
      error_class: errorClass,
      error_message: errorMessage,
    })),
  };
}

/** `id` names the entry in its routes: the jid, or the `~` id of a jid no URL path can carry as itself. */
export function entryJson(entry: SortedEntry): Record<string, unknown> {
  return {
    score: entry.score,
    at: entry.at,
    ...jobJson(entry),
    id: entry.jid === undefined ? null : entryId(entry.jid),
  };
}

/**
 * The wire form of a record: the listed fields in this order, named in
 * snake_case as Sidekiq's JSON names them, with an absent value as null
 * (never left out, so every object of a list has the same keys).
 */
export function wireFields<T extends object>(
  record: T,
  fields: ReadonlyArray<keyof T & string>,
): Record<string, unknown> {
  const wire: Record<string, unknown> = {};
  for (const field of fields)
    wire[field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)] = record[field] ?? null;
  return wire;
}

export const BATCH_SUMMARY_FIELDS = [
  'bid',
  'description',
  'createdAt',
  'parentBid',
  'tags',
  'total',
  'pending',
  'failures',
  'complete',
  'success',
  'death',
  'completeAt',
  'successAt',
  'deathAt',
] as const;
export const PROCESS_FIELDS = [
  'identity',
  'hostname',
  'pid',
  'tag',
  'labels',
  'queues',
  'concurrency',
  'busy',
  'quiet',
  'beat',
  'rss',
  'rttUs',
  'startedAt',
  'version',
  'embedded',
] as const;
export const CRON_FIELDS = [
  'pjid',
  'class',
  'cron',
  'tz',
  'args',
  'queue',
  'retry',
  'unique',
  'catchUp',
  'disabled',
  'lastSlot',
  'nextSlot',
  'runningJid',
] as const;

export function processJson(record: ProcessRecord, nowSeconds: number): Record<string, unknown> {
  return { ...wireFields(record, PROCESS_FIELDS), stale: isStale(record, nowSeconds) };
}

export function isStale(record: ProcessRecord, nowSeconds: number): boolean {
  return record.beat === undefined || nowSeconds - record.beat > STALE_AFTER_SECONDS;
}

export function locationJson(location: JobLocation): Record<string, unknown> {
  if (location.where === 'queue')
    return { where: 'queue', queue: location.queue, position: location.position, job: jobJson(location.job) };
  if (location.where === 'busy') {
    const { work } = location;
    return {
      where: 'busy',
      process: work.process,
      tid: work.tid,
      queue: work.queue ?? null,
      run_at: work.runAt ?? null,
      job: jobJson(work.job),
    };
  }
  return { where: location.where, ...entryJson(location.entry) };
}

export const CLASS_METRIC_FIELDS = ['class', 'processed', 'failed', 'totalMs', 'avgMs', 'series'] as const;
export const METRICS_FIELDS = ['period', 'bucketSeconds', 'startsAt', 'endsAt', 'buckets'] as const;

export function classMetricsJson(metrics: ClassMetrics): Record<string, unknown> {
  return wireFields(metrics, CLASS_METRIC_FIELDS);
}

export function metricsJson(result: MetricsResult): Record<string, unknown> {
  return { ...wireFields(result, METRICS_FIELDS), periods: Object.keys(METRICS_PERIODS) };
}

export function signalJson(result: SignalResult): Record<string, unknown> {
  return { signal: result.signal, signalled: result.signalled, skipped: result.skipped };
}
