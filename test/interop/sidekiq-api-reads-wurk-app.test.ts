import 'reflect-metadata';
import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Worker, WurkModule, WurkServer } from '../../src';
import { runRuby } from '../support/sidekiq';
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
  ws = Sidekiq::Workers.new.map { |_p, _t, w| { jid: w['payload']['jid'], queue: w['queue'] } }
  puts JSON.generate(processes: ps, work: ws, processed: Sidekiq::Stats.new.processed)`;

/** Sidekiq Web's Quiet and Stop buttons call exactly these API methods. */
describe("Sidekiq's Quiet and Stop reach a running wurk app", () => {
  const server = usePrivateRedis();
  let app: INestApplicationContext | undefined;


  afterAll(async () => {
    release();
    await app?.close();
  });

  async function beats(identity: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const before = await server.redis.hget(identity, 'beat');
      await waitFor(async () => (await server.redis.hget(identity, 'beat')) !== before, { timeout: 15000, what: 'a beat' });
    }
  }

  it('quiet! stops fetching while the running job finishes; stop! stops the processors and leaves the registry, not the app', async () => {
    @Module({
      imports: [WurkModule.forRoot({ redis: { url: server.url }, concurrency: 2, queues: ['default'], heartbeatInterval: 0.2, pollInterval: 0.2 })],
      providers: [GateJob],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    const wurk = app.get(WurkServer);
    await wurk.ready;
    const identity = wurk.identity.identity;

    const { jid } = await runRuby<{ jid: string }>(`puts JSON.generate(jid: Sidekiq::Client.push('class' => 'GateJob', 'args' => ['hold']))`, server.url);
    const running = await waitFor(
      async () => {
        const view = await runRuby<View>(VIEW, server.url);
        return view.work.length === 1 ? view : undefined;
      },
      { timeout: 30000, interval: 200, what: 'Sidekiq::Workers to list the held job' },
    );
    expect(running.work).toEqual([{ jid, queue: 'default' }]);
    expect(running.processes).toEqual([{ identity, busy: 1, stopping: false }]);

    await runRuby('Sidekiq::ProcessSet.new.each(&:quiet!); puts "{}"', server.url);
    await waitFor(async () => (await runRuby<View>(VIEW, server.url)).processes[0]?.stopping, { timeout: 30000, interval: 200, what: 'the process shown as stopping' });
    await runRuby(`Sidekiq::Client.push('class' => 'GateJob', 'args' => ['later']); puts '{}'`, server.url);
    await beats(identity, 3);
    // Quiet: the new job stays queued for whoever is not quiet.
    expect(await server.redis.llen('queue:default')).toBe(1);

    release();
    await waitFor(async () => (await runRuby<View>(VIEW, server.url)).processed === 1, { timeout: 30000, interval: 200, what: 'the held job counted' });

    await runRuby('Sidekiq::ProcessSet.new.each(&:stop!); puts "{}"', server.url);
    await waitFor(async () => (await server.redis.sismember('processes', identity)) === 0, { timeout: 30000, what: 'the process to leave the registry' });
    const after = await runRuby<View>(VIEW, server.url);
    expect(after.processes).toEqual([]);
    expect(after.work).toEqual([]);
    expect(await server.redis.llen('queue:default')).toBe(1);
    // TERM stops the processors only: the Nest app still resolves its providers.
    expect(app.get(WurkServer)).toBe(wurk);
  });
});
