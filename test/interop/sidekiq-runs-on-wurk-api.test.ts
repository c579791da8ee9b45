import 'reflect-metadata';
import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Worker, WurkModule, WurkServer } from '../../src';
import { runRuby } from '../support/sidekiq';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

let release: () => void = () => undefined;

@Worker({ name: 'HoldJob' })
class HoldJob {
  async perform(kind: string): Promise<void> {
    if (kind === 'fail') throw new Error('nope');
    if (kind === 'hold') await new Promise<void>((resolve) => (release = resolve));
  }
}

describe('interop: Sidekiq API sees a wurk process while it processes', () => {
  const server = usePrivateRedis();
  let app: INestApplicationContext | undefined;

  afterAll(async () => {
    release();
    await app?.close();
  });

  it('ProcessSet shows its concurrency, queues and busy count, Workers its in-flight job, Stats its counts', async () => {
    @Module({
      imports: [WurkModule.forRoot({ redis: { url: server.url }, concurrency: 4, queues: [['default', 2], ['low', 1]], heartbeatInterval: 0.3, heartbeatTtl: 5, pollInterval: 0.2 })],
      providers: [HoldJob],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    await app.get(WurkServer).ready;
    await runRuby(
      `Sidekiq::Client.push('class' => 'HoldJob', 'args' => ['ok']); Sidekiq::Client.push('class' => 'HoldJob', 'args' => ['fail'], 'retry' => false); Sidekiq::Client.push('class' => 'HoldJob', 'args' => ['hold']); puts '1'`,
      server.url,
    );
    type View = { processes: Array<{ concurrency: number; queues: string[]; busy: number }>; workers: Array<{ queue: string; klass: string }>; processed: number; failed: number };
    const script = `
      ps = Sidekiq::ProcessSet.new.map { |p| { concurrency: p['concurrency'], queues: p['queues'], busy: p['busy'] } }
      ws = []
      Sidekiq::Workers.new.each { |_p, _t, w| payload = w['payload']; payload = JSON.parse(payload) if payload.is_a?(String); ws << { queue: w['queue'], klass: payload['class'] } }
      s = Sidekiq::Stats.new
      puts JSON.generate(processes: ps, workers: ws, processed: s.processed, failed: s.failed)`;
    const view = await waitFor(
      async () => {
        const seen = await runRuby<View>(script, server.url);
        return seen.processes[0]?.busy === 1 && seen.workers.length === 1 && seen.processed >= 2 ? seen : undefined;
      },
      { timeout: 30000, interval: 300, what: 'Sidekiq to see the process, its work and its counts' },
    );
    expect(view.processes).toEqual([{ concurrency: 4, queues: ['default', 'low'], busy: 1 }]);
    expect(view.workers).toEqual([{ queue: 'default', klass: 'HoldJob' }]);
    expect(view.processed).toBe(2);
    expect(view.failed).toBe(1);
    release();
  });

  it("Sidekiq's Quiet stops fetching and Stop drains the processors, leaving the app running", async () => {
    const redis = server.client();
    await runRuby(`Sidekiq::ProcessSet.new.each(&:quiet!); puts '1'`, server.url);
    await waitFor(async () => (await runRuby<boolean[]>(`puts JSON.generate(Sidekiq::ProcessSet.new.map(&:stopping?))`, server.url))[0] === true, {
      timeout: 20000,
      interval: 300,
      what: 'the process to show as quiet',
    });
    await runRuby(`Sidekiq::Client.push('class' => 'HoldJob', 'args' => ['ok']); puts '1'`, server.url);
    await runRuby(`Sidekiq::ProcessSet.new.each(&:stop!); puts '1'`, server.url);
    await waitFor(async () => (await redis.scard('processes')) === 0, { timeout: 20000, what: 'the process to leave the set' });
    expect(await redis.llen('queue:default')).toBe(1);
    expect(app!.get(WurkServer).manager!.isQuiet).toBe(true);
  });
});
