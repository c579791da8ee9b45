import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClientService, WurkServer } from '../../src';
import { parseQueues } from '../../src/nest/standalone-worker';
import { Keys } from '../../src/redis/keys';
import { AppModule, QuickJob, SlowJob } from './fixtures/jobs.module';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';
import { TS_LOADER } from '../support/ts-loader-path';

const root = join(__dirname, '..', '..');

describe('wurk-worker: the processors of an app in a process of their own', () => {
  const redis = usePrivateRedis();
  const dir = mkdtempSync(join(tmpdir(), 'wurk-standalone-'));
  const log = join(dir, 'jobs.log');
  let web: INestApplicationContext;
  let worker: ChildProcess;
  let output = '';

  const lines = (): string[] => readFileSync(log, 'utf8').split('\n').filter(Boolean);

  beforeAll(async () => {
    writeFileSync(log, '');
    process.env.REDIS_URL = redis.url;
    web = await NestFactory.createApplicationContext(AppModule, { logger: false });
    await web.init();
    // Flags for module and concurrency, the environment for the queues: both sources are read.
    worker = spawn(
      process.execPath,
      [
        '-r',
        TS_LOADER,
        join(root, 'src', 'entries', 'wurk-worker.ts'),
        '--module',
        'test/e2e/fixtures/jobs.module.ts',
        '--concurrency',
        '3',
      ],
      {
        cwd: root,
        env: { ...process.env, REDIS_URL: redis.url, JOBS_LOG: log, WURK_QUEUES: 'standalone' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    worker.stdout?.on('data', (chunk) => (output += chunk));
    worker.stderr?.on('data', (chunk) => (output += chunk));
  });

  afterAll(async () => {
    if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
    await web?.close();
    delete process.env.REDIS_URL;
    rmSync(dir, { recursive: true, force: true });
  });

  it('processes jobs a web-only app pushed, with concurrency and queues from its flags and environment, and drains on SIGTERM', async () => {
    expect(web.get(WurkServer).processing).toBe(false);
    const client = web.get(ClientService);
    for (const n of [1, 2, 3]) await client.performAsync(QuickJob, n);
    await waitFor(() => lines().filter((line) => line.startsWith('quick')).length === 3, {
      timeout: 60000,
      what: `the worker to run the quick jobs (output: ${output})`,
    });
    expect(lines().every((line) => !line.endsWith(`pid=${process.pid}`))).toBe(true);

    const [identity] = await redis.redis.smembers(Keys.processes);
    const info = JSON.parse((await redis.redis.hget(Keys.process(identity), 'info')) as string);
    expect(info).toMatchObject({ concurrency: 3, queues: ['standalone'] });
    // The same one boot line as an app, from the bin: what it fetches, how many at once, how, from where.
    expect(output.replace(/\x1b\[[0-9;]*m/g, '').match(/processing queues .*/g)).toEqual([
      expect.stringMatching(
        /^processing queues standalone \(strict\), concurrency 3; reliable fetch; Redis (redis:\/\/)?127\.0\.0\.1:\d+$/,
      ),
    ]);

    await client.performAsync(SlowJob, 1500);
    await waitFor(() => lines().some((line) => line.startsWith('slow start')), { what: 'the slow job to start' });
    const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
    worker.kill('SIGTERM');
    expect(await exited).toBe(0);
    // Drained, not abandoned: the running job finished before the process left, and nothing waits anywhere.
    expect(lines().filter((line) => line.startsWith('slow'))).toEqual([
      expect.stringMatching(/^slow start/),
      expect.stringMatching(/^slow done/),
    ]);
    expect(await redis.redis.llen(Keys.queue('standalone'))).toBe(0);
    expect(await redis.redis.scard(Keys.processes)).toBe(0);
  });

  it('reads strict and weighted queue lists', () => {
    expect(parseQueues('critical, default', 'q')).toEqual(['critical', 'default']);
    expect(parseQueues('critical:3,default', 'q')).toEqual([
      ['critical', 3],
      ['default', 1],
    ]);
    expect(() => parseQueues('critical:0', 'q')).toThrow(/bad entry/);
  });
});
