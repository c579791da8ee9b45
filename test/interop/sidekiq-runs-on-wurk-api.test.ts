import 'reflect-metadata';
import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Worker, WurkModule, WurkServer } from '../../src';
import { SIDEKIQ_VERSIONS, useSidekiqRuby } from '../support/sidekiq';
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

describe.each(SIDEKIQ_VERSIONS)('interop: Sidekiq $version API sees a wurk process while it processes', (version) => {
  const server = usePrivateRedis();
  const ruby = useSidekiqRuby(version, server);
  let app: INestApplicationContext | undefined;

  afterAll(async () => {
    release();
    await app?.close();
  });

  it('ProcessSet shows its concurrency, queues and busy count, Workers its in-flight job, Stats its counts', async () => {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          concurrency: 4,
          queues: [
            ['default', 2],
            ['low', 1],
          ],
          heartbeatInterval: 0.3,
          heartbeatTtl: 5,
          pollInterval: 0.2,
        }),
      ],
      providers: [HoldJob],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    await app.get(WurkServer).ready;
    await ruby.run(
      `Sidekiq::Client.push('class' => 'HoldJob', 'args' => ['ok']); Sidekiq::Client.push('class' => 'HoldJob', 'args' => ['fail'], 'retry' => false); Sidekiq::Client.push('class' => 'HoldJob', 'args' => ['hold']); puts '1'`,
    );
    type View = {
      processes: Array<{ concurrency: number; queues: string[]; busy: number }>;
      workers: Array<{ queue: string; klass: string }>;
      processed: number;
      failed: number;
    };
    const script = `
      ps = Sidekiq::ProcessSet.new.map { |p| { concurrency: p['concurrency'], queues: p['queues'], busy: p['busy'] } }
      ws = work_entries.map { |w| { queue: w['queue'], klass: w['payload']['class'] } }
      s = Sidekiq::Stats.new
      puts JSON.generate(processes: ps, workers: ws, processed: s.processed, failed: s.failed)`;
    const view = await waitFor(
      async () => {
        const seen = await ruby.run<View>(script);
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
    await ruby.run(`Sidekiq::ProcessSet.new.each(&:quiet!); puts '1'`);
    await waitFor(
      async () =>
        (await ruby.run<boolean[]>(`puts JSON.generate(Sidekiq::ProcessSet.new.map(&:stopping?))`))[0] === true,
      {
        timeout: 20000,
        interval: 300,
        what: 'the process to show as quiet',
      },
    );
    await ruby.run(`Sidekiq::Client.push('class' => 'HoldJob', 'args' => ['ok']); puts '1'`);
    await ruby.run(`Sidekiq::ProcessSet.new.each(&:stop!); puts '1'`);
    await waitFor(async () => (await redis.scard('processes')) === 0, {
      timeout: 20000,
      what: 'the process to leave the set',
    });
    expect(await redis.llen('queue:default')).toBe(1);
    expect(app!.get(WurkServer).manager!.isQuiet).toBe(true);
  });
});
