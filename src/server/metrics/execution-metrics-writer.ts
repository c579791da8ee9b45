import type { CommandConnection, RedisCommand } from '../../redis/command-connection';
import { Keys } from '../../redis/keys';
import { execChecked } from '../heartbeat/heartbeat-writer';
import type { ExecutionCounts } from './execution-tally';

/** The per-minute hashes and histograms live 8 hours (Sidekiq's SHORT_TERM and HISTOGRAM_TTL). */
const SHORT_TERM_TTL = 8 * 60 * 60;
/** 8.x keeps its ten-minute rollups 3 days (MID_TERM). */
const MID_TERM_TTL = 3 * 24 * 60 * 60;

/**
 * Writes one heartbeat's execution metrics as Sidekiq 7.3's and 8.1's
 * ExecutionTracker#flush do, under both versions' key names, in one MULTI:
 * each class's histogram (BITFIELD u16 counters, saturating) and the
 * `Class|p`, `Class|f`, `Class|ms` counters of the minute (and 8.x's ten
 * minutes). `|ms` and the histogram count successful runs only, as Sidekiq's.
 */
export async function writeExecutionMetrics(
  redis: CommandConnection,
  counts: ExecutionCounts,
  epochMs: number,
): Promise<void> {
  const commands: RedisCommand[] = [];
  for (const [className, entry] of counts) {
    const increments: Array<string | number> = [];
    entry.buckets.forEach((count, index) => {
      if (count > 0) increments.push('INCRBY', 'u16', `#${index}`, count);
    });
    // without it, a BITFIELD with no counter and an EXPIRE of a missing key write nothing either; two commands saved.
    // Stryker disable next-line ConditionalExpression
    if (increments.length === 0) continue;
    for (const key of [Keys.metricsHistogramV7(className, epochMs), Keys.metricsHistogramV8(className, epochMs)]) {
      commands.push(['BITFIELD', key, 'OVERFLOW', 'SAT', ...increments], ['EXPIRE', key, SHORT_TERM_TTL]);
    }
  }
  const buckets: Array<[string, number]> = [
    [Keys.metricsMinuteV7(epochMs), SHORT_TERM_TTL],
    [Keys.metricsMinuteV8(epochMs), SHORT_TERM_TTL],
    [Keys.metricsTenMinutesV8(epochMs), MID_TERM_TTL],
  ];
  for (const [key, ttl] of buckets) {
    for (const [className, entry] of counts) {
      commands.push(['HINCRBY', key, `${className}|p`, entry.processed]);
      if (entry.failed > 0) commands.push(['HINCRBY', key, `${className}|f`, entry.failed]);
      if (entry.processed > entry.failed) commands.push(['HINCRBY', key, `${className}|ms`, entry.ms]);
    }
    commands.push(['EXPIRE', key, ttl]);
  }
  await execChecked(redis, commands);
}
