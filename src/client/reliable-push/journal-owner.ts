import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Who writes a reliable-push journal file, read from its name as a pid file is read: the host, the pid, the process's
 * start time (so a pid the system gave to another process since is not taken for the writer) and a nonce per journal
 * instance (two transports of one process on one directory, or two incarnations of one pid where the start time is
 * unknown).
 *
 * `rp-<host>-<pid>-<start>-<nonce>-<seq>.jsonl`: `start` is the kernel's start time of the process in clock ticks
 * since boot (`/proc/<pid>/stat`, field 22) or `x` where there is no /proc; `seq` orders one writer's files.
 */
export interface JournalOwner {
  host: string;
  pid: number;
  start: string;
  nonce: string;
}

/** Alive: leave it alone. Ended: its files may be claimed. Elsewhere: another host's, whose pids mean nothing here. */
export type OwnerState = 'alive' | 'ended' | 'elsewhere';

const NAME = /^rp-([A-Za-z0-9._]+)-(\d+)-(\d+|x)-([0-9a-f]{8})-(\d+)\.jsonl$/;

/** Nonces of the journals this process has open: the only owners with this process's pid and start that are alive. */
const openHere = new Set<string>();

/** This host's name as it appears in a file name. */
export const HOST = hostname().replace(/[^A-Za-z0-9.]/g, '_') || 'localhost';

let selfStart: string | undefined;

/** A new owner for a journal opened by this process; `release` it when the journal closes. */
export function newOwner(): JournalOwner {
  selfStart ??= processStat(process.pid)?.start ?? 'x';
  const owner = { host: HOST, pid: process.pid, start: selfStart, nonce: randomBytes(4).toString('hex') };
  openHere.add(owner.nonce);
  return owner;
}

/** The journal closed: another journal (of this process, or of the next one) may claim what it left. */
export function releaseOwner(owner: JournalOwner): void {
  openHere.delete(owner.nonce);
}

export function journalName(owner: JournalOwner, seq: number): string {
  return `rp-${owner.host}-${owner.pid}-${owner.start}-${owner.nonce}-${seq}.jsonl`;
}

export function parseJournalName(name: string): { owner: JournalOwner; seq: number } | undefined {
  const match = NAME.exec(name);
  if (!match) return undefined;
  return {
    owner: { host: match[1], pid: Number(match[2]), start: match[3], nonce: match[4] },
    seq: Number(match[5]),
  };
}

export function sameOwner(a: JournalOwner, b: JournalOwner): boolean {
  return a.host === b.host && a.pid === b.pid && a.start === b.start && a.nonce === b.nonce;
}

/**
 * Whether the writer of a journal still runs, checked as a pid file is: the pid answers signal 0, is not a zombie,
 * and (where /proc tells) started when the writer did. This process's own pid is alive only for a journal it has open.
 */
export function ownerState(owner: JournalOwner): OwnerState {
  if (owner.host !== HOST) return 'elsewhere';
  if (owner.pid === process.pid) {
    selfStart ??= processStat(process.pid)?.start ?? 'x';
    return owner.start === selfStart && openHere.has(owner.nonce) ? 'alive' : 'ended';
  }
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: a process of another user has that pid; /proc says more below.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return 'ended';
  }
  const stat = processStat(owner.pid);
  if (!stat) return 'alive';
  if (stat.state === 'Z' || stat.state === 'X') return 'ended';
  if (owner.start !== 'x' && stat.start !== owner.start) return 'ended';
  return 'alive';
}

/** State and start time of a process from /proc/<pid>/stat; undefined without /proc (or once the process is gone). */
function processStat(pid: number): { state: string; start: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces or parentheses itself: fields count from the last.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const start = fields[19];
  return fields[0] && start && /^\d+$/.test(start) ? { state: fields[0], start } : undefined;
}
