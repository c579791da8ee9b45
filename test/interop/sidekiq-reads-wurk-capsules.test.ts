import 'reflect-metadata';
import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientService, Worker, WurkModule, WurkServer } from '../../src';
import { SIDEKIQ_VERSIONS, useSidekiqRuby } from '../support/sidekiq';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

const releases: Array<() => void> = [];
const releaseAll = () => releases.splice(0).forEach((release) => release());
const hold = () => new Promise<void>((resolve) => releases.push(resolve));

@Worker({ name: 'FastHold' })
class FastHold {
  perform(kind: string): Promise<void> | void {
    if (kind === 'hold') return hold();
  }
}

/** Names its capsule and no queue: its jobs go to the capsule's first queue, `reports`. */
@Worker({ name: 'ReportHold', capsule: 'slow' })
class ReportHold {
  perform(kind: string): Promise<void> | void {
    if (kind === 'hold') return hold();
  }
}

interface View {
  processes: Array<{
    identity: string;
    busy: number;
    concurrency: number;
    stopping: boolean;
    queues: string[];
    weights: unknown;
    capsules: unknown;
    api_queues: unknown;
    api_weights: unknown;
  }>;
  work: Array<{ klass: string; queue: string; tid: string }>;
}

const VIEW = `
  ps = Sidekiq::ProcessSet.new.map do |p|
    { identity: p.identity, busy: p['busy'], concurrency: p['concurrency'], stopping: p.stopping?, queues: p['queues'],
      weights: p['weights'], capsules: p['capsules'],
      api_queues: p.respond_to?(:queues) ? p.queues : nil, api_weights: p.respond_to?(:weights) ? p.weights : nil }
  end
  ws = work_entries.map { |w| { klass: w['payload']['class'], queue: w['queue'], tid: w['tid'] } }
  puts JSON.generate(processes: ps, work: ws)`;

/** Sidekiq 7's capsules, as each version's API reads a wurk process with two of them; Quiet and Stop reach both. */
describe.each(SIDEKIQ_VERSIONS)('Sidekiq $version reads a wurk process with capsules', (version) => {
  const server = usePrivateRedis();
  const ruby = useSidekiqRuby(version, server);
  let app: INestApplicationContext | undefined;

  afterAll(async () => {
    releaseAll();
    await app?.close();
  });

  it('ProcessSet shows the summed concurrency, every queue, per-capsule weights and busy across capsules; quiet! and stop! reach every capsule', async () => {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          concurrency: 3,
          queues: [
            ['critical', 2],
            ['default', 1],
          ],
          capsules: [{ name: 'slow', queues: ['reports', 'exports'], concurrency: 2 }],
          heartbeatInterval: 0.2,
          pollInterval: 0.2,
        }),
      ],
      providers: [FastHold, ReportHold],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    const wurk = app.get(WurkServer);
    const client = app.get(ClientService);
    await wurk.ready;
    const identity = wurk.identity.identity;

    await client.performAsync(FastHold, 'hold');
    await client.performAsync(ReportHold, 'hold');
    const running = await waitFor(
      async () => {
        const view = await ruby.run<View>(VIEW);
        return view.work.length === 2 && view.processes[0]?.busy === 2 ? view : undefined;
      },
      { timeout: 30000, interval: 200, what: 'both capsules busy in the process hash and the work hash' },
    );
    const [process] = running.processes;
    expect(process).toMatchObject({
      identity,
      busy: 2,
      concurrency: 5,
      stopping: false,
      queues: ['critical', 'default', 'reports', 'exports'],
    });
    expect(process.weights).toEqual([
      { critical: 2, default: 1 },
      { reports: 0, exports: 0 },
    ]);
    expect(process.capsules).toEqual({
      default: { concurrency: 3, mode: 'weighted', weights: { critical: 2, default: 1 } },
      slow: { concurrency: 2, mode: 'strict', weights: { reports: 0, exports: 0 } },
    });
    // 8.x derives Process#queues and #weights from `capsules`; 7.x returns the flat fields; 6.x has neither method.
    if (version.major >= 8) {
      expect(process.api_queues).toEqual(['critical', 'default', 'reports', 'exports']);
      expect(process.api_weights).toEqual({ critical: 2, default: 1, reports: 0, exports: 0 });
    } else if (version.major === 7) {
      expect(process.api_weights).toEqual([
        { critical: 2, default: 1 },
        { reports: 0, exports: 0 },
      ]);
    }
    const work = running.work
      .map(({ klass, queue }) => ({ klass, queue }))
      .sort((a, b) => a.klass.localeCompare(b.klass));
    expect(work).toEqual([
      { klass: 'FastHold', queue: 'default' },
      { klass: 'ReportHold', queue: 'reports' },
    ]);
    expect(new Set(running.work.map((entry) => entry.tid)).size).toBe(2);

    await ruby.run('Sidekiq::ProcessSet.new.each(&:quiet!); puts "{}"');
    await waitFor(async () => (await ruby.run<View>(VIEW)).processes[0]?.stopping, {
      timeout: 30000,
      interval: 200,
      what: 'the process shown as stopping',
    });
    await client.performAsync(FastHold, 'later');
    await client.performAsync(ReportHold, 'later');
    // Quiet reached both fetch loops: each capsule leaves its new job queued (three beats: time for a fetch to take
    // it).
    for (let i = 0; i < 3; i++) {
      const before = await server.redis.hget(identity, 'beat');
      await waitFor(async () => (await server.redis.hget(identity, 'beat')) !== before, {
        timeout: 15000,
        what: 'a beat',
      });
    }
    expect([await server.redis.llen('queue:default'), await server.redis.llen('queue:reports')]).toEqual([1, 1]);

    releaseAll();
    await waitFor(async () => (await ruby.run<View>(VIEW)).processes[0]?.busy === 0, {
      timeout: 30000,
      interval: 200,
      what: 'both held jobs to finish',
    });
    await ruby.run('Sidekiq::ProcessSet.new.each(&:stop!); puts "{}"');
    await waitFor(async () => (await server.redis.sismember('processes', identity)) === 0, {
      timeout: 30000,
      what: 'the process to leave the registry',
    });
    expect(wurk.manager?.isStopping).toBe(true);
    // Nothing of either capsule left in a private list.
    expect(await server.redis.keys('queue:*|*')).toEqual([]);
  });
});
