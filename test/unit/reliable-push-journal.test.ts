import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import {
  journalName,
  newOwner,
  ownerState,
  parseJournalName,
  releaseOwner,
} from '../../src/client/reliable-push/journal-owner';
import { readJournal } from '../../src/client/reliable-push/journal-file';
import { journalLine, PushOp, readJournalLine, textsOf } from '../../src/client/reliable-push/push-record';

describe('reliable-push journal lines', () => {
  // Member bytes a re-encoding would change: a Ruby float, an integer past 2^53, escapes, non-ASCII, U+2028.
  const text =
    '{"class":"Ruby::Job","args":[1.0,12345678901234567890,"caf\\u00e9","é😀\u2028","\\ud800"],"jid":"abc","queue":"q"}';
  const ops: PushOp[] = [
    { kind: 'one', queue: 'q', text },
    { kind: 'scheduledOne', score: '1700000000.5', text },
    { kind: 'rendered', queue: 'q', entries: ['1700000000.5', text, '1700000001', text], scheduled: true },
    {
      kind: 'jobs',
      immediate: [{ text, lock: { digest: 'd', jid: 'abc', uniqueFor: 60 } }],
      scheduled: [{ text, score: '1700000000', lock: { digest: 'd', jid: 'abc', uniqueFor: 60, at: 1700000000 } }],
      enqueuedAtMs: 1699999999123,
    },
  ];

  it('round-trips every kind of push with its payload bytes exactly', () => {
    for (const op of ops) {
      const line = journalLine({ id: 7, at: 1700000000000, op });
      expect(line.endsWith('\n')).toBe(true);
      expect(readJournalLine(line.slice(0, -1))).toEqual({ id: 7, at: 1700000000000, op });
      for (const each of textsOf(op)) expect(each).toBe(text);
    }
    expect(readJournalLine(journalLine({ done: 7 }).slice(0, -1))).toEqual({ done: 7 });
  });

  it('says why a line cannot be read: a changed byte, a cut, a record of the wrong shape', () => {
    const line = journalLine({ id: 1, at: 1, op: ops[0] }).slice(0, -1);
    expect(readJournalLine(line.replace('1.0', '1.5'))).toBe('checksum mismatch');
    expect(readJournalLine(line.slice(0, -10))).toBe('checksum mismatch');
    expect(readJournalLine('garbage')).toBe('no checksum');
    // Lines whose checksum holds, of the wrong shape.
    const forged = (entry: unknown) => journalLine(entry as never).slice(0, -1);
    expect(readJournalLine(forged({ id: 1, at: 1, op: { kind: 'eval', script: 'x' } }))).toBe('not a push record');
    expect(readJournalLine(forged({ id: -1, at: 1, op: ops[0] }))).toBe('not a push record');
    expect(readJournalLine(forged({ id: 1, at: 1, op: { kind: 'one', queue: 'q', text: 5 } }))).toBe(
      'not a push record',
    );
    expect(
      readJournalLine(forged({ id: 1, at: 1, op: { kind: 'rendered', queue: 'q', entries: ['1'], scheduled: true } })),
    ).toBe('not a push record');
    expect(readJournalLine(forged({ done: 'x' }))).toBe('not a journal entry');
  });

  it('a file: done marks remove their records; unreadable lines are kept byte for byte, a torn last one said so', () => {
    const content = Buffer.concat([
      Buffer.from(journalLine({ id: 1, at: 1, op: ops[0] })),
      Buffer.from(journalLine({ id: 2, at: 2, op: ops[1] })),
      Buffer.from([0xff, 0xfe, 0x20, 0x0a]),
      Buffer.from(journalLine({ done: 1 })),
      Buffer.from(journalLine({ id: 3, at: 3, op: ops[2] }).slice(0, 40)),
    ]);
    const { records, unreadable } = readJournal(content);
    expect(records.map((record) => record.id)).toEqual([2]);
    expect(unreadable.map(({ number, reason }) => [number, reason])).toEqual([
      [3, 'no checksum'],
      [5, 'checksum mismatch, and no end of line (torn by a crash)'],
    ]);
    expect(unreadable[0].bytes).toEqual(Buffer.from([0xff, 0xfe, 0x20]));
  });
});

describe('reliable-push journal owners, checked as a pid file is', () => {
  it('a file name carries its owner and sequence', () => {
    const owner = newOwner();
    try {
      const name = journalName(owner, 12);
      expect(name).toMatch(/^rp-[A-Za-z0-9._]+-\d+-(\d+|x)-[0-9a-f]{8}-12\.jsonl$/);
      expect(parseJournalName(name)).toEqual({ owner, seq: 12 });
      expect(parseJournalName(`${name}.tmp`)).toBeUndefined();
      expect(parseJournalName(`unreadable-1-${name}.txt`)).toBeUndefined();
    } finally {
      releaseOwner(owner);
    }
  });

  it('this process: alive only for a journal it has open; another incarnation of its pid has ended', () => {
    const owner = newOwner();
    expect(ownerState(owner)).toBe('alive');
    expect(ownerState({ ...owner, nonce: '00000000' })).toBe('ended');
    expect(ownerState({ ...owner, start: owner.start === '1' ? '2' : '1' })).toBe('ended');
    expect(ownerState({ ...owner, host: 'another-host' })).toBe('elsewhere');
    releaseOwner(owner);
    expect(ownerState(owner)).toBe('ended');
  });

  it('another process: alive while it runs (with its own start time), ended once it exited', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const pid = child.pid!;
      const start = readStart(pid);
      const owner = { host: newOwnerHost(), pid, start: start ?? 'x', nonce: '12345678' };
      expect(ownerState(owner)).toBe('alive');
      // Its pid given to another process since: the start time tells them apart.
      if (start) expect(ownerState({ ...owner, start: String(Number(start) + 1) })).toBe('ended');
      child.kill('SIGKILL');
      await exited;
      expect(ownerState(owner)).toBe('ended');
    } finally {
      child.kill('SIGKILL');
    }
  });
});

function newOwnerHost(): string {
  const owner = newOwner();
  releaseOwner(owner);
  return owner.host;
}

function readStart(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}
