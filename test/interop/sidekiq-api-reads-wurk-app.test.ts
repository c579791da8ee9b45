import 'reflect-metadata';
import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Worker, WurkModule, WurkServer } from '../../src';
import { SIDEKIQ_VERSIONS, useSidekiqRuby } from '../support/sidekiq';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

let release: () => void = () => undefined;

@Worker({ name: 'GateJob' })
class GateJob {
  async perform(kind: string): Promise<void> {
    if (kind === 'hold') await new Promise<void>((resolve) => (release = resolve));
  }
}

interface View {
  processes: Array<{ identity: string; busy: number; stopping: boolean }>;
  work: Array<{ jid: string; queue: string }>;
  processed: number;
}

const VIEW = `
  ps = Sidekiq::ProcessSet.new.map { |p| { identity: p.identity, busy: p['busy'], stopping: p.stopping? } }
  ws = work_entries.map { |w| { jid: w['payload']['jid'], queue: w['queue'] } }
  puts JSON.generate(processes: ps, work: ws, processed: Sidekiq::Stats.new.processed)`;

/** Sidekiq Web's Quiet and Stop buttons call exactly these API methods. */
describe.each(SIDEKIQ_VERSIONS)("Sidekiq $version's Quiet and Stop reach a running wurk app", (version) => {
  const server = usePrivateRedis();
  const ruby = useSidekiqRuby(version, server);
  let app: INestApplicationContext | undefined;

  afterAll(async () => {
    release();
    await app?.close();
  });

  async function beats(identity: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const before = await server.redis.hget(identity, 'beat');
      await waitFor(async () => (await server.redis.hget(identity, 'beat')) !== before, {
        timeout: 15000,
        what: 'a beat',
      });
    }
  }

  it('quiet! stops fetching while the running job finishes; stop! stops the processors and leaves the registry, not the app', async () => {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          concurrency: 2,
          queues: ['default'],
          heartbeatInterval: 0.2,
          pollInterval: 0.2,
        }),
      ],
      providers: [GateJob],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    const wurk = app.get(WurkServer);
    await wurk.ready;
    const identity = wurk.identity.identity;

    const { jid } = await ruby.run<{ jid: string }>(
      `puts JSON.generate(jid: Sidekiq::Client.push('class' => 'GateJob', 'args' => ['hold']))`,
    );
    const running = await waitFor(
      async () => {
        // The work hash and the process hash are two MULTIs of one beat, as in Sidekiq's launcher: a read
        // between them sees the job listed and the old busy count, so both are waited for.
        const view = await ruby.run<View>(VIEW);
        return view.work.length === 1 && view.processes[0]?.busy === 1 ? view : undefined;
      },
      { timeout: 30000, interval: 200, what: 'Sidekiq::Workers to list the held job and ProcessSet to count it busy' },
    );
    expect(running.work).toEqual([{ jid, queue: 'default' }]);
    expect(running.processes).toEqual([{ identity, busy: 1, stopping: false }]);

    await ruby.run('Sidekiq::ProcessSet.new.each(&:quiet!); puts "{}"');
    await waitFor(async () => (await ruby.run<View>(VIEW)).processes[0]?.stopping, {
      timeout: 30000,
      interval: 200,
      what: 'the process shown as stopping',
    });
    await ruby.run(`Sidekiq::Client.push('class' => 'GateJob', 'args' => ['later']); puts '{}'`);
    await beats(identity, 3);
    // Quiet: the new job stays queued for whoever is not quiet.
    expect(await server.redis.llen('queue:default')).toBe(1);

    release();
    await waitFor(async () => (await ruby.run<View>(VIEW)).processed === 1, {
      timeout: 30000,
      interval: 200,
      what: 'the held job counted',
    });

    await ruby.run('Sidekiq::ProcessSet.new.each(&:stop!); puts "{}"');
    await waitFor(async () => (await server.redis.sismember('processes', identity)) === 0, {
      timeout: 30000,
      what: 'the process to leave the registry',
    });
    const after = await ruby.run<View>(VIEW);
    expect(after.processes).toEqual([]);
    expect(after.work).toEqual([]);
    expect(await server.redis.llen('queue:default')).toBe(1);
    // TERM stops the processors only: the Nest app still resolves its providers.
    expect(app.get(WurkServer)).toBe(wurk);
  });
});
