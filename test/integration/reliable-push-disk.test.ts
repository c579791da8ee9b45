import 'reflect-metadata';
import { ChildProcess, spawn } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoggerService, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type Redis from 'ioredis';
import { ClientService, JobPayload, Worker, WurkConfigError, WurkModule } from '../../src';
import { uniqueDigest } from '../../src/job/unique-digest';
import { Client } from '../../src/client/client';
import { ReliablePushTransport } from '../../src/client/reliable-push/reliable-push-transport';
import { PushJournalError } from '../../src/client/reliable-push/push-journal-error';
import { closeConnection, createConnection } from '../../src/redis/connection';
import { NO_REPLICA_WAIT } from '../../src/redis/durable-write';
import { carriesUniqueFor, uniqueClientMiddleware } from '../../src/unique/unique-client';
import { TS_LOADER } from '../support/ts-loader-path';
import { usePrivateRedis } from '../support/private-redis';
import { recordingLogger } from '../support/recording-logger';
import { waitFor } from '../support/wait';

const FIXTURE = join(__dirname, 'fixtures', 'reliable-push-producer.ts');

/** One producer process (fixtures/reliable-push-producer.ts) and what it said. */
interface Producer {
  child: ChildProcess;
  output(): string;
  /** The first line starting with `prefix`, once said; fails when the process ends first. */
  line(prefix: string, timeout?: number): Promise<string>;
  kill9(): Promise<void>;
  exited: Promise<void>;
}

interface LedgerEntry {
  jid: string;
  kind: 'one' | 'scheduled' | 'unique' | 'bulk' | 'same';
  at?: number;
}

@Worker({ queue: 'disk' })
class DiskWorker {
  async perform(): Promise<void> {}
}

describe('reliable push on disk (client.reliablePushDirectory), against a real redis-server', () => {
  const server = usePrivateRedis();
  let scratch: string;
  const producers: Producer[] = [];
  const opened: Array<{ transport: ReliablePushTransport; redis: Redis }> = [];

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'wurk-push-disk-'));
  });

  afterEach(async () => {
    while (producers.length > 0) await producers.pop()!.kill9();
    while (opened.length > 0) {
      const { transport, redis } = opened.pop()!;
      await transport.close(0);
      await closeConnection(redis);
    }
    // Every test starts on an empty, running Redis (it keeps no data across a restart).
    await server.halt();
    await server.boot();
  });

  afterAll(() => {
    rmSync(scratch, { recursive: true, force: true });
  });

  let dirs = 0;
  /** A fresh journal directory and ledger for one test. */
  function workspace(): { dir: string; ledger: string } {
    const id = ++dirs;
    return { dir: join(scratch, `journal-${id}`), ledger: join(scratch, `ledger-${id}.jsonl`) };
  }

  function spawnProducer(env: Record<string, string>): Producer {
    const child = spawn(process.execPath, ['-r', TS_LOADER, FIXTURE], {
      cwd: join(__dirname, '..', '..'),
      env: { ...process.env, WURK_REDIS_URL: server.url, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout?.on('data', (chunk) => (log += chunk));
    child.stderr?.on('data', (chunk) => (log += chunk));
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null) resolve();
      child.once('exit', () => resolve());
    });
    const producer: Producer = {
      child,
      output: () => log,
      exited,
      line: (prefix, timeout = 60000) =>
        waitFor(
          () => {
            const found = log.split('\n').find((line) => line.startsWith(prefix));
            if (found) return found;
            if (child.exitCode !== null || /^FAILED/m.test(log))
              throw Object.assign(new Error(`the producer ended before "${prefix}":\n${log}`), { fatal: true });
            return undefined;
          },
          { timeout, what: `the producer to say ${prefix} (it said:\n${log})` },
        ),
      async kill9() {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        // Reaped before anyone asks whether its pid is alive.
        await exited;
      },
    };
    producers.push(producer);
    return producer;
  }

  /** A reliable-push transport of this (test) process over the journal `dir`: "the process started next". */
  function openTransport(dir: string, deadlineMs = 1000) {
    const redis = createConnection({ url: server.url }, 'wurk-test');
    const logger = recordingLogger();
    const transport = new ReliablePushTransport(
      redis,
      { ...NO_REPLICA_WAIT, deadlineMs },
      () => `127.0.0.1:${server.port}`,
      { maxJobs: 1_000_000, maxBytes: 1 << 28, maxAge: 3600, directory: dir },
      logger,
    );
    opened.push({ transport, redis });
    const client = new Client(transport, { timestamps: 'seconds' }).use(
      uniqueClientMiddleware(redis, transport),
      carriesUniqueFor,
    );
    return { transport, redis, logger, client };
  }

  function readLedger(path: string): LedgerEntry[] {
    if (!existsSync(path)) return [];
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LedgerEntry);
  }

  /** Every copy of every job in `queue:disk` and `schedule`, by jid, with the scores of the scheduled ones. */
  async function jobsInRedis(): Promise<Map<string, { copies: number; scores: number[] }>> {
    const jobs = new Map<string, { copies: number; scores: number[] }>();
    const seen = (jid: string) => {
      let job = jobs.get(jid);
      if (!job) jobs.set(jid, (job = { copies: 0, scores: [] }));
      job.copies++;
      return job;
    };
    for (const item of await server.redis.lrange('queue:disk', 0, -1)) seen((JSON.parse(item) as { jid: string }).jid);
    const scheduled = await server.redis.zrange('schedule', '0', '-1', 'WITHSCORES');
    for (let index = 0; index < scheduled.length; index += 2)
      seen((JSON.parse(scheduled[index]) as { jid: string }).jid).scores.push(Number(scheduled[index + 1]));
    return jobs;
  }

  /** Every ledger job in Redis at least once, nothing else there; resolves to the number of extra copies. */
  async function expectEveryJob(ledger: LedgerEntry[]): Promise<number> {
    const inRedis = await jobsInRedis();
    const missing = ledger.filter((entry) => !inRedis.has(entry.jid));
    expect(missing).toEqual([]);
    const known = new Set(ledger.map((entry) => entry.jid));
    expect([...inRedis.keys()].filter((jid) => !known.has(jid))).toEqual([]);
    for (const entry of ledger.filter((each) => each.kind === 'scheduled'))
      expect(new Set(inRedis.get(entry.jid)!.scores)).toEqual(new Set([entry.at]));
    let duplicates = 0;
    for (const { copies } of inRedis.values()) duplicates += copies - 1;
    return duplicates;
  }

  const journalFiles = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.jsonl'));

  it('a producer kill -9ed with 2,000 pushes buffered: the next process replays them, each job arrives once, scheduled ones at their score, before its own pushes', async () => {
    const { dir, ledger } = workspace();
    await server.halt();
    const producer = spawnProducer({ WURK_DIR: dir, WURK_JOBS: '2000', WURK_LEDGER: ledger, WURK_TAG: 'kill' });
    expect(await producer.line('BUFFERED')).toBe('BUFFERED 2000');
    expect(journalFiles(dir)).toHaveLength(1);
    await producer.kill9();
    const entries = readLedger(ledger);
    expect(entries).toHaveLength(2000);
    expect(new Set(entries.map((entry) => entry.kind))).toEqual(new Set(['one', 'scheduled', 'unique', 'bulk']));

    await server.boot();
    const started = Date.now();
    const { transport, logger, client } = openTransport(dir);
    expect(transport.stats.recovered).toBe(2000);
    // Pushed by the new process at once: it goes behind every recovered job.
    const after = await client.push({ class: 'AfterRestart', queue: 'disk', args: [] });
    await waitFor(() => transport.stats.buffered === 0, { timeout: 30000, what: 'the recovered jobs to be sent' });
    const replayMs = Date.now() - started;
    expect(await expectEveryJob([...entries, { jid: after!, kind: 'one' }])).toBe(0);
    expect((JSON.parse((await server.redis.lrange('queue:disk', 0, 0))[0]) as { jid: string }).jid).toBe(after);
    expect(transport.stats).toMatchObject({ delivered: 2001, alreadySent: 0, inDoubt: 0, halted: 0, unreadable: 0 });
    // Each unique job's lock taken for its own jid when it was sent.
    for (const { jid } of entries.filter((entry) => entry.kind === 'unique').slice(0, 5)) {
      const [raw] = (await server.redis.lrange('queue:disk', 0, -1)).filter((item) => item.includes(jid));
      const lock = `unique:${uniqueDigest(JobPayload.parse(raw))}`;
      expect(await server.redis.get(lock)).toBe(jid);
    }
    expect(logger.lines).toContainEqual(
      expect.stringMatching(/^warn reliable push: 2000 job\(s\) recovered from the journal of process \d+/),
    );
    // Drained: the files are gone.
    expect(readdirSync(dir)).toEqual([]);
    console.log(`reliable push on disk: 2000 jobs recovered after kill -9 and sent in ${replayMs} ms`);
  }, 120000);

  it('kill -9 in the middle of the drain: every job arrives at least once; the push in flight is found in Redis, not sent twice', async () => {
    const { dir, ledger } = workspace();
    await server.halt();
    // It kills itself (SIGKILL) once 1,500 jobs went out of its buffer: wherever the drain is at that moment.
    const producer = spawnProducer({
      WURK_DIR: dir,
      WURK_JOBS: '6000',
      WURK_LEDGER: ledger,
      WURK_TAG: 'mid',
      WURK_DIE_AFTER: '1500',
    });
    await producer.line('BUFFERED');
    await server.boot();
    await producer.exited;
    expect(producer.child.signalCode).toBe('SIGKILL');
    const landed = async () => (await server.redis.llen('queue:disk')) + (await server.redis.zcard('schedule'));
    const before = await landed();
    expect(before).toBeLessThan(6000);
    const { transport } = openTransport(dir);
    expect(transport.stats.recovered).toBeGreaterThanOrEqual(6000 - before);
    expect(transport.stats.recovered).toBeLessThanOrEqual(6000 - before + 2);
    await waitFor(() => transport.stats.buffered === 0, { timeout: 30000, what: 'the rest to be sent' });
    const duplicates = await expectEveryJob(readLedger(ledger));
    console.log(
      `reliable push on disk: killed after ${before} of 6000 jobs reached Redis; the next process recovered ` +
        `${transport.stats.recovered}, found ${transport.stats.alreadySent} already in Redis, duplicates: ${duplicates}`,
    );
    expect(duplicates).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
  }, 120000);

  it('the push a dead process may have been sending is looked for in Redis first: found there, it is not sent twice', async () => {
    const { dir } = workspace();
    await server.halt();
    const first = openTransport(dir);
    const at = Math.floor(Date.now() / 1000) + 600;
    const jids = [
      await first.client.push({ class: 'InFlight', queue: 'disk', args: [1] }),
      await first.client.push({ class: 'Next', queue: 'disk', args: [2] }),
    ];
    expect(await first.transport.close(50)).toBe(0);
    const [file] = journalFiles(dir);
    const [record] = readFileSync(join(dir, file), 'utf8').split('\n');
    const text = (JSON.parse(record.slice(17)) as { op: { immediate: Array<{ text: string }> } }).op.immediate[0].text;
    await server.boot();
    // As if the process had written it to Redis and died before marking it sent.
    await server.redis.lpush('queue:disk', text);
    const next = openTransport(dir);
    await waitFor(() => next.transport.stats.buffered === 0, { timeout: 15000, what: 'the recovered jobs to be sent' });
    expect(next.transport.stats).toMatchObject({ recovered: 2, alreadySent: 1, delivered: 1 });
    const queued = (await server.redis.lrange('queue:disk', 0, -1)).reverse().map((item) => JSON.parse(item).jid);
    expect(queued).toEqual(jids);

    // A scheduled one, by its member in `schedule`.
    const { dir: dir2 } = workspace();
    await server.halt();
    const third = openTransport(dir2);
    const scheduled = await third.client.push({ class: 'Later', queue: 'disk', args: [3], at });
    await third.transport.close(50);
    const [file2] = journalFiles(dir2);
    const [record2] = readFileSync(join(dir2, file2), 'utf8').split('\n');
    const member = (JSON.parse(record2.slice(17)) as { op: { scheduled: Array<{ text: string }> } }).op.scheduled[0]
      .text;
    await server.boot();
    await server.redis.zadd('schedule', at, member);
    const fourth = openTransport(dir2);
    await waitFor(() => fourth.transport.stats.buffered === 0, { timeout: 15000, what: 'the recovered job' });
    expect(fourth.transport.stats).toMatchObject({ recovered: 1, alreadySent: 1, delivered: 0 });
    expect(await server.redis.zrange('schedule', '0', '-1', 'WITHSCORES')).toEqual([member, String(at)]);
    expect(JSON.parse(member).jid).toBe(scheduled);
  }, 60000);

  it('a torn last record and a changed one: reported and set aside byte for byte, never sent, and the boot goes on with the rest', async () => {
    const { dir, ledger } = workspace();
    await server.halt();
    const producer = spawnProducer({
      WURK_DIR: dir,
      WURK_JOBS: '8',
      WURK_LEDGER: ledger,
      WURK_TAG: 'torn',
      WURK_THEN: 'close',
    });
    // Closed with Redis away: in disk mode nothing is dropped, it stays in the journal.
    expect(await producer.line('CLOSED')).toBe('CLOSED 0 8');
    expect(producer.output()).toMatch(/8 buffered job\(s\) left in the journal in .* at exit/);
    await producer.exited;
    const [file] = journalFiles(dir);
    const path = join(dir, file);
    const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    // The 8 jobs are 7 records: single pushes and one bulk slice of two.
    expect(lines).toHaveLength(7);
    // A byte of an argument changed (the line is still valid JSON), and the last line cut short as by a crash.
    const changed = lines[1].replace('torn', 'tern');
    expect(changed).not.toBe(lines[1]);
    const torn = lines[6].slice(0, -25);
    writeFileSync(path, [lines[0], changed, ...lines.slice(2, 6)].join('\n') + '\n' + torn);
    const entries = readLedger(ledger);
    const jidIn = (line: string) => entries.filter((entry) => line.includes(entry.jid)).map((entry) => entry.jid);
    const lost = [...jidIn(lines[1]), ...jidIn(lines[6])];
    expect(lost.length).toBeGreaterThanOrEqual(2);

    await server.boot();
    const { transport, logger } = openTransport(dir);
    expect(transport.stats.unreadable).toBe(2);
    await waitFor(() => transport.stats.buffered === 0, { timeout: 15000, what: 'the readable records to be sent' });
    const inRedis = await jobsInRedis();
    for (const entry of entries) expect(inRedis.has(entry.jid)).toBe(!lost.includes(entry.jid));
    const errors = logger.lines.filter((line) => /could not be read/.test(line));
    expect(errors).toEqual([
      expect.stringMatching(
        /^error reliable push: 2 line\(s\) of the journal .* could not be read \(line 2: checksum mismatch; line 7: .*torn by a crash\)/,
      ),
    ]);
    const kept = readdirSync(dir).filter((name) => name.startsWith('unreadable-'));
    expect(kept).toHaveLength(1);
    expect(readFileSync(join(dir, kept[0]), 'utf8')).toBe(`${changed}\n${torn}\n`);
    // Only the set-aside file is left: the journal itself drained.
    expect(journalFiles(dir)).toEqual([]);
  }, 120000);

  it('two live processes on one directory: neither replays the other, a third replays nothing; a dead one is replayed once', async () => {
    const { dir, ledger } = workspace();
    await server.halt();
    const a = spawnProducer({ WURK_DIR: dir, WURK_JOBS: '300', WURK_LEDGER: ledger, WURK_TAG: 'a' });
    const b = spawnProducer({ WURK_DIR: dir, WURK_JOBS: '300', WURK_LEDGER: ledger, WURK_TAG: 'b' });
    await a.line('BUFFERED');
    await b.line('BUFFERED');
    expect(journalFiles(dir)).toHaveLength(2);
    // A third process starts on the directory while both are alive: it takes neither journal.
    const third = openTransport(dir);
    expect(third.transport.stats.recovered).toBe(0);
    await server.boot();
    await a.line('DRAINED');
    await b.line('DRAINED');
    // Its connection is lazy and it has pushed nothing: connected here, as an app's other work would.
    await third.redis.ping();
    expect(await expectEveryJob(readLedger(ledger))).toBe(0);
    expect(third.transport.stats.recovered).toBe(0);
    expect(journalFiles(dir)).toEqual([]);

    // Then one of them dies with jobs buffered: the third (on reconnecting) and a fourth (at start) race for its
    // journal, and one of them sends it.
    await server.halt();
    await waitFor(() => third.redis.status !== 'ready', { what: 'the third process to see Redis gone' });
    const { ledger: ledger2 } = workspace();
    const dying = spawnProducer({ WURK_DIR: dir, WURK_JOBS: '300', WURK_LEDGER: ledger2, WURK_TAG: 'c' });
    await dying.line('BUFFERED');
    await dying.kill9();
    await server.boot();
    const fourth = openTransport(dir);
    await waitFor(() => third.transport.stats.recovered + fourth.transport.stats.recovered === 300, {
      timeout: 15000,
      what: 'the dead journal to be claimed',
    });
    await waitFor(() => third.transport.stats.buffered + fourth.transport.stats.buffered === 0, {
      timeout: 15000,
      what: 'its jobs to be sent',
    });
    expect(await expectEveryJob(readLedger(ledger2))).toBe(0);
    console.log(
      `reliable push on disk: the dead process's 300 jobs were claimed by ` +
        `${third.transport.stats.recovered > 0 ? 'the live process on reconnecting' : 'the process starting'}`,
    );
  }, 120000);

  it('unique locks are taken again when replayed: the first jid of a job wins, a duplicate and a job whose lock another jid holds are left out', async () => {
    const { dir, ledger } = workspace();
    await server.halt();
    const producer = spawnProducer({
      WURK_DIR: dir,
      WURK_JOBS: '8',
      WURK_LEDGER: ledger,
      WURK_TAG: 'lock',
      WURK_UNIQUE_DUPLICATES: '2',
    });
    await producer.line('BUFFERED');
    await producer.kill9();
    const entries = readLedger(ledger);
    const uniques = entries.filter((entry) => entry.kind === 'unique');
    const same = entries.filter((entry) => entry.kind === 'same');
    expect(uniques).toHaveLength(2);
    expect(same).toHaveLength(2);

    await server.boot();
    // Another producer holds the lock of the second unique job by now.
    const digestOf = (args: unknown[]) =>
      uniqueDigest(
        JobPayload.fromEntries([
          ['class', 'UniqueDiskJob'],
          ['queue', 'disk'],
          ['args', args],
        ]),
      );
    await server.redis.set(`unique:${digestOf(['lock', 6])}`, 'another-jid', 'EX', 600);
    const { transport } = openTransport(dir);
    await waitFor(() => transport.stats.buffered === 0, { timeout: 15000, what: 'the recovered jobs to be sent' });
    expect(transport.stats).toMatchObject({ recovered: 10, halted: 2, delivered: 8 });
    const inRedis = await jobsInRedis();
    expect(inRedis.has(uniques[0].jid)).toBe(true);
    expect(inRedis.has(uniques[1].jid)).toBe(false);
    expect(inRedis.has(same[0].jid)).toBe(true);
    expect(inRedis.has(same[1].jid)).toBe(false);
    expect(await server.redis.get(`unique:${digestOf(['lock', 2])}`)).toBe(uniques[0].jid);
    expect(await server.redis.get(`unique:${digestOf(['lock', 'same'])}`)).toBe(same[0].jid);
    expect(await server.redis.get(`unique:${digestOf(['lock', 6])}`)).toBe('another-jid');
    const ttl = await server.redis.ttl(`unique:${digestOf(['lock', 2])}`);
    expect(ttl).toBeGreaterThan(590);
    expect(ttl).toBeLessThanOrEqual(600);
  }, 120000);

  it('a push whose record cannot be written is refused with PushJournalError, and never sent', async () => {
    const { dir } = workspace();
    await server.halt();
    const { transport, client } = openTransport(dir);
    // The directory goes away (a volume unmounted, a clean-up job): the journal file cannot be created.
    rmSync(dir, { recursive: true, force: true });
    const error = await client.push({ class: 'Refused', queue: 'disk', args: [1] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PushJournalError);
    expect((error as PushJournalError).message).toMatch(
      /^the reliable-push journal in .* could not be written \(ENOENT.*\): Redis is unreachable and this push was not taken$/,
    );
    expect(transport.stats.refused).toBe(1);
    // Back: the next push is taken, and only it is sent.
    mkdirSync(dir);
    const kept = await client.push({ class: 'Kept', queue: 'disk', args: [2] });
    await server.boot();
    await waitFor(() => transport.stats.buffered === 0, { timeout: 15000, what: 'the buffer to drain' });
    const queued = (await server.redis.lrange('queue:disk', 0, -1)).map((item) => JSON.parse(item).jid);
    expect(queued).toEqual([kept]);
    expect(transport.stats).toMatchObject({ delivered: 1, refused: 1 });
  }, 60000);

  describe('in the Nest module', () => {
    function captureLogs(): { logger: LoggerService; lines: string[] } {
      const lines: string[] = [];
      const logger: LoggerService = {
        log: (message) => lines.push(`log ${String(message)}`),
        warn: (message) => lines.push(`warn ${String(message)}`),
        error: (message) => lines.push(`error ${String(message)}`),
      };
      return { logger, lines };
    }

    async function boot(dir: string, logger: LoggerService) {
      @Module({
        imports: [
          WurkModule.forRoot({
            redis: { url: server.url },
            server: { processing: false, shutdownTimeout: 1 },
            client: { reliablePush: true, reliablePushDirectory: dir },
          }),
        ],
        providers: [DiskWorker],
      })
      class AppModule {}
      return NestFactory.createApplicationContext(AppModule, { logger });
    }

    it('the option needs reliablePush, and is checked like the others', async () => {
      @Module({
        imports: [WurkModule.forRoot({ redis: { url: server.url }, client: { reliablePushDirectory: '/tmp/x' } })],
      })
      class Without {}
      await expect(
        NestFactory.createApplicationContext(Without, { logger: false, abortOnError: false }),
      ).rejects.toThrow(
        new WurkConfigError(
          'client.reliablePushDirectory',
          'needs client.reliablePush: true (without it nothing is buffered, on disk or in memory)',
        ),
      );
      @Module({
        imports: [
          WurkModule.forRoot({ redis: { url: server.url }, client: { reliablePush: true, reliablePushDirectory: '' } }),
        ],
      })
      class Empty {}
      await expect(NestFactory.createApplicationContext(Empty, { logger: false, abortOnError: false })).rejects.toThrow(
        /client\.reliablePushDirectory must be a non-empty string/,
      );
      const file = join(scratch, 'a-file');
      appendFileSync(file, '');
      @Module({
        imports: [
          WurkModule.forRoot({
            redis: { url: server.url },
            client: { reliablePush: true, reliablePushDirectory: file },
          }),
        ],
      })
      class NotADirectory {}
      await expect(
        NestFactory.createApplicationContext(NotADirectory, { logger: false, abortOnError: false }),
      ).rejects.toThrow(/client\.reliablePushDirectory cannot be used: .* is not a directory this process can write/);
    });

    it('app.close() with Redis away keeps the jobs in the journal (nothing dropped), and the next app sends them', async () => {
      const { dir } = workspace();
      const first = captureLogs();
      const app = await boot(dir, first.logger);
      const client = app.get(ClientService);
      await client.performAsync(DiskWorker);
      await server.redis.del('queue:disk');
      await server.halt();
      await waitFor(() => first.lines.some((line) => /unreachable/.test(line)), { what: 'the outage line' });
      const jids = [];
      for (let n = 0; n < 5; n++) jids.push(await client.performAsync(DiskWorker));
      expect(first.lines).toContainEqual(
        expect.stringContaining(`buffering pushes in memory and in the journal in ${dir}`),
      );
      const transport = client.transport as ReliablePushTransport;
      await app.close();
      expect(transport.stats).toMatchObject({ droppedAtExit: 0, keptAtExit: 5 });
      expect(first.lines.filter((line) => /dropped at exit/.test(line))).toEqual([]);
      expect(first.lines).toContainEqual(expect.stringContaining('5 buffered job(s) left in the journal'));
      expect(journalFiles(dir)).toHaveLength(1);

      await server.boot();
      const second = captureLogs();
      const next = await boot(dir, second.logger);
      const nextTransport = next.get(ClientService).transport as ReliablePushTransport;
      expect(nextTransport.stats.recovered).toBe(5);
      await waitFor(() => nextTransport.stats.buffered === 0, { timeout: 15000, what: 'the kept jobs to be sent' });
      const queued = (await server.redis.lrange('queue:disk', 0, -1)).reverse().map((item) => JSON.parse(item).jid);
      expect(queued).toEqual(jids);
      await next.close();
      expect(readdirSync(dir)).toEqual([]);
    }, 60000);
  });
});
