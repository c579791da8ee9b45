import { ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Heartbeat } from '../../src/server/heartbeat/heartbeat';
import { newProcessIdentity } from '../../src/server/identity';
import { Keys } from '../../src/redis/keys';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

/**
 * A child process samples the `beat` field while this test's main thread
 * spins in a busy loop: the samples are taken by a clock the blocked event
 * loop cannot hold back, so they show what other processes would see.
 */
const SAMPLER = `
const Redis = require('ioredis');
const redis = new Redis(Number(process.argv[1]), '127.0.0.1');
const key = process.argv[2];
const beats = new Set();
let until;
redis.ping().then(() => process.stdout.write('ready\\n'));
process.stdin.on('data', (chunk) => { until = Date.now() + Number(String(chunk).trim()); sample(); });
async function sample() {
  while (Date.now() < until) {
    const beat = await redis.hget(key, 'beat');
    if (beat) beats.add(beat);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  process.stdout.write(JSON.stringify([...beats]) + '\\n');
  redis.disconnect();
}
`;

describe('Heartbeat while perform blocks the event loop', () => {
  const server = usePrivateRedis();
  let sampler: ChildProcess | undefined;
  let heartbeat: Heartbeat | undefined;
  let blocked: Heartbeat | undefined;

  afterAll(async () => {
    sampler?.kill('SIGKILL');
    await heartbeat?.stop();
    await blocked?.stop();
  });

  it('keeps writing beats from its own thread while the main thread is blocked for 3 s', async () => {
    const identity = newProcessIdentity();
    heartbeat = new Heartbeat({
      redis: { url: server.url },
      identity,
      info: {
        tag: '',
        labels: [],
        concurrency: 1,
        queues: ['default'],
        weights: [{ default: 0 }],
        version: '0.1.0',
        startedAt: Date.now() / 1000,
      },
      interval: 0.2,
      ttl: 60,
    });
    await heartbeat.start();

    sampler = spawn(process.execPath, ['-e', SAMPLER, String(server.port), identity.identity], {
      cwd: process.cwd(),
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines: string[] = [];
    createInterface({ input: sampler.stdout! }).on('line', (line) => lines.push(line));
    await waitFor(() => lines.includes('ready'), { timeout: 15000, what: 'the sampler connected' });

    const blockMs = 3000;
    sampler.stdin!.write(`${blockMs}\n`);
    const blockStart = Date.now() / 1000;
    const end = Date.now() + blockMs;
    while (Date.now() < end) {
      // Busy loop: nothing on this thread's event loop runs, timers included.
    }
    const blockEnd = Date.now() / 1000;

    const result = await waitFor(() => lines.find((line) => line.startsWith('[')), {
      timeout: 15000,
      what: 'the sampler result',
    });
    const beatsDuringBlock = (JSON.parse(result) as string[])
      .map(Number)
      .filter((beat) => beat > blockStart + 0.1 && beat < blockEnd);
    // At 0.2 s a beat, 3 s of blocking holds ~15 beats; demand a third of that on a loaded 2-core machine.
    expect(beatsDuringBlock.length).toBeGreaterThanOrEqual(5);
    expect(Number(await server.client().hget(Keys.lastBeat, identity.identity))).toBeGreaterThan(blockStart);
  });

  it('answers TTIN during the block with a dump that names the blocked event loop', async () => {
    const redis = server.client();
    const identity = newProcessIdentity();
    const lines: string[] = [];
    const log = (message: string) => lines.push(message);
    blocked = new Heartbeat({
      redis: { url: server.url },
      identity,
      info: {
        tag: '',
        labels: [],
        concurrency: 1,
        queues: ['default'],
        weights: [{ default: 0 }],
        version: '0.1.0',
        startedAt: Date.now() / 1000,
      },
      interval: 0.2,
      ttl: 60,
      logger: { log, warn: log, error: log },
    });
    await blocked.start();
    blocked.setWork([
      {
        tid: 'b1',
        queue: 'default',
        payload: '{"class":"Spin","jid":"cccccccccccccccccccccccc","args":[]}',
        runAt: Date.now() / 1000,
      },
    ]);
    await waitFor(async () => (await redis.hget(identity.identity, 'busy')) === '1', { what: 'busy 1' });

    await redis.lpush(Keys.signals(identity.identity), 'TTIN');
    const end = Date.now() + 3000;
    while (Date.now() < end) {
      // Busy loop: the thread pops TTIN and pings this thread, which cannot answer.
    }
    await waitFor(() => lines.some((line) => line.includes('its event loop is blocked')), {
      what: 'the blocked-loop dump',
    });
    expect(lines.find((line) => line.includes('TTIN received'))).toContain('Spin jid=cccccccccccccccccccccccc');
  });
});
