/**
 * Reliable push's settings as resolved from `client.reliablePush*`, their defaults, and the shape of its counts: the
 * options layer and the metrics read these without loading the transport.
 */
/** The `client.reliablePush*` bounds, resolved. */
export interface ReliablePushSettings {
  maxJobs: number;
  maxBytes: number;
  /** Seconds a buffered job may wait; older ones are dropped unsent and reported. */
  maxAge: number;
  /**
   * Disk mode (`client.reliablePushDirectory`): every buffered push is also written to a journal in this directory
   * before the push resolves, and a process that starts replays what a process that died left there.
   */
  directory?: string;
}

/** Pro's default buffer (its last 1,000 pushes); bytes and age are wurk's own bounds, which Pro does not have. */
export const RELIABLE_PUSH_DEFAULTS: ReliablePushSettings = { maxJobs: 1000, maxBytes: 16 * 1024 * 1024, maxAge: 3600 };

/** What the buffer did since the process started, and what it holds now. */
export interface ReliablePushStats {
  /** Jobs held now, waiting for Redis. */
  buffered: number;
  /** Bytes of payload held now. */
  bufferedBytes: number;
  /** Jobs sent from the buffer once Redis was back. */
  delivered: number;
  /** Jobs dropped unsent for being older than `maxAge`. */
  expired: number;
  /** Jobs left out at send time because a client middleware's lock (a unique job) was lost to another push. */
  halted: number;
  /** Jobs whose send from the buffer lost its reply (or was refused by Redis): reported by jid, never sent twice. */
  inDoubt: number;
  /** Jobs still buffered when the process closed, whose Redis never came back: dropped. */
  droppedAtExit: number;
  /** Pushes refused with PushBufferFullError, or (disk mode) PushJournalError. */
  refused: number;
  /** Disk mode: jobs read back from the journals of processes that ended with them unsent. */
  recovered: number;
  /** Disk mode: recovered jobs found in Redis already (their process died after sending them): not sent again. */
  alreadySent: number;
  /** Disk mode: jobs still buffered when the process closed, left in the journal for the next process to send. */
  keptAtExit: number;
  /** Disk mode: journal lines that could not be read (torn by a crash, or changed), set aside unsent. */
  unreadable: number;
}
