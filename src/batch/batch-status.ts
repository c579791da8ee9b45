import { toEpochSeconds } from '../job/time';

/** The last failure of one job of a batch (Sidekiq Pro's `Status#failure_info`). */
export interface BatchFailure {
  jid: string;
  errorClass: string;
  errorMessage: string;
}

/** A batch as read from Redis (Sidekiq Pro's `Sidekiq::Batch::Status`), whichever process wrote it. */
export interface BatchStatus {
  bid: string;
  description: string | null;
  /** Epoch seconds. */
  createdAt: number | null;
  callbackQueue: string | null;
  callbackClass: string | null;
  /** The parent batch's bid, for a child batch (Sidekiq Pro's `parent_bid`). */
  parentBid: string | null;
  /** Jobs added. */
  total: number;
  /** Jobs not yet succeeded (a dead job stays pending until it is retried to success). */
  pending: number;
  /** Jobs failing right now, awaiting a retry. */
  failures: number;
  /** Every job has run at least once (the `complete` event fired). */
  complete: boolean;
  /** Every job succeeded (the `success` event fired). */
  success: boolean;
  /** A job died (the `death` event fired). */
  death: boolean;
  /** Epoch seconds at which each event fired, null until then. */
  completeAt: number | null;
  successAt: number | null;
  deathAt: number | null;
  /** Jobs still to succeed or die. */
  jids: string[];
  /** Jobs that died. */
  deadJids: string[];
  failureInfo: BatchFailure[];
  /**
   * Invalidated (Sidekiq Pro's `invalidate_all`): its jobs that had not started when it was are skipped, each counted
   * as a success, so the batch still finishes. Its children are invalidated with it.
   */
  invalidated: boolean;
  /** Every child batch's bid (`b-<bid>-kids`; Sidekiq Pro's `child_count` is its length). */
  children: string[];
  /** Children not yet finished (`b-<bid>-pkids`): while one is left, the batch fires neither complete nor success. */
  pendingChildren: string[];
}

/** The raw reads one status is made of. */
export interface BatchReads {
  hash: Record<string, string>;
  jids: string[];
  died: string[];
  failInfo: Record<string, string>;
  markers: { complete: boolean; success: boolean; death: boolean };
  kids?: string[];
  pendingKids?: string[];
}

/** Members of `b-<bid>-jids` that hold an open batch, not jobs (see BatchStore). */
export const HOLD_PREFIX = 'hold-';
/** Ruby Wurk's hold members (`hold:<jid>`, its `#jobs` blocks), no jobs either. */
const RUBY_HOLD_PREFIX = 'hold:';

/** True for a `b-<bid>-jids` member that holds a batch open (wurk's or Ruby Wurk's), not a job. */
export function isHold(member: string): boolean {
  return member.startsWith(HOLD_PREFIX) || member.startsWith(RUBY_HOLD_PREFIX);
}

/** Builds a status from its reads, leniently: a field a writer left out reads as null or 0, never throws. */
export function toBatchStatus(bid: string, reads: BatchReads): BatchStatus {
  const { hash } = reads;
  const at = (field: string) => toEpochSeconds(numberOrNull(hash[field])) ?? null;
  return {
    bid,
    description: hash.description ?? null,
    createdAt: at('created_at'),
    callbackQueue: hash.callback_queue ?? null,
    callbackClass: hash.callback_class ?? null,
    parentBid: hash.parent_bid || null,
    total: count(hash.total),
    pending: count(hash.pending),
    failures: count(hash.failures),
    complete: reads.markers.complete || hash.complete_at !== undefined,
    success: reads.markers.success || hash.success_at !== undefined,
    death: reads.markers.death || hash.death_at !== undefined,
    completeAt: at('complete_at'),
    successAt: at('success_at'),
    deathAt: at('death_at'),
    jids: reads.jids.filter((member) => !isHold(member)).sort(),
    deadJids: [...reads.died].sort(),
    failureInfo: Object.entries(reads.failInfo)
      .map(([jid, text]) => failureOf(jid, text))
      .sort((a, b) => a.jid.localeCompare(b.jid)),
    invalidated: hash.invalidated === '1',
    children: [...(reads.kids ?? [])].sort(),
    pendingChildren: [...(reads.pendingKids ?? [])].sort(),
  };
}

function count(text: string | undefined): number {
  const value = Number(text);
  return Number.isFinite(value) ? value : 0;
}

function numberOrNull(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/** Wurk's `{error_class, error_message}`, or Sidekiq Pro's `[class, message]`; anything else is the message. */
function failureOf(jid: string, text: string): BatchFailure {
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed))
      return { jid, errorClass: String(parsed[0] ?? ''), errorMessage: String(parsed[1] ?? '') };
    if (parsed && typeof parsed === 'object') {
      const record = parsed as Record<string, unknown>;
      return { jid, errorClass: String(record.error_class ?? ''), errorMessage: String(record.error_message ?? '') };
    }
  } catch {
    // Not JSON: shown as written.
  }
  return { jid, errorClass: '', errorMessage: text };
}
