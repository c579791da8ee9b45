import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Worker, WurkModule } from '../../src';
import { chain, FlowService } from '../../src/entries/flows';
import { usePrivateRedis } from '../support/private-redis';
import { runRuby } from '../support/sidekiq';
import { waitFor } from '../support/wait';

const runs: unknown[][] = [];

@Worker({ name: 'InteropStep', queue: 'flow-interop' })
class InteropStep {
  perform(...args: unknown[]): void {
    runs.push(args);
  }
}

/**
 * A flow written by a Ruby process (redis-rb, in Ruby Wurk's layout: lib/wurk/lua/flow_create.lua's records, a root
 * queued with its bytes) is run and advanced by a wurk process with the bytes of its payloads kept; a flow wurk writes
 * is read from Ruby, field by field, and its queued root by Sidekiq's own API.
 */
describe('flows shared with Ruby (Sidekiq 6.4.1 and redis-rb)', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let app: INestApplicationContext;

  beforeAll(async () => {
    @Module({
      imports: [
        WurkModule.forRoot({ redis: { url: server.url }, server: { queues: ['flow-interop'], concurrency: 2 } }),
      ],
      providers: [InteropStep],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    await app.init();
  }, 30000);
  afterAll(() => app?.close());

  it('runs and advances a flow Ruby wrote, its payload bytes as Ruby wrote them', async () => {
    await runRuby(
      `
      r = Sidekiq.redis { |c| c }
      fid = 'RubyInterop001'
      job = ->(step, queue, jid, bid) { %Q({"class":"InteropStep","args":["#{step}",1.0,12345678901234567890],"retry":true,"queue":"#{queue}","jid":"#{jid}","created_at":1790000000.5,"bid":"#{bid}"}) }
      cb = ->(i) { JSON.generate([["success", "Wurk::Flow::Completion", { "fid" => fid, "node" => i }]]) }
      Sidekiq.redis do |c|
        c.hset("flow:#{fid}", "created_at", "1790000000.5", "state", "running", "total", "2", "pending", "2", "depth", "2", "width", "1", "expiry", "2592000")
        # The leaf's queue is one the wurk process does not fetch: its released bytes stay in Redis to be read.
        [["0", "root", "flow-interop", "jidroot00000000000000a0", "RubyBidRoot000", "[]", "[1]", "enqueued", "0"],
         ["1", "leaf", "flow-held", "jidleaf00000000000000a1", "RubyBidLeaf000", "[0]", "[]", "waiting", "1"]].each do |i, name, queue, jid, bid, deps, dependents, state, remaining|
          c.hset("flow:#{fid}:#{i}", "index", i, "name", name, "class", "InteropStep", "queue", queue, "jid", jid,
                 "bid", bid, "state", state, "deps", deps, "dependents", dependents, "remaining", remaining, "payload", job.(name, queue, jid, bid))
          root = state == "enqueued"
          c.hset("b-#{bid}", "created_at", "1790000000.5", "description", "InteropStep[:#{name}]", "callback_queue", "flow-interop",
                 "callback_class", "", "parent_bid", "", "tags", "[]", "linger", "", "callbacks", cb.(i.to_i),
                 "total", root ? "1" : "0", "pending", root ? "1" : "0", "failures", "0")
          if root
            c.sadd("b-#{bid}-jids", jid)
            c.sadd("queues", "flow-interop")
            c.lpush("queue:flow-interop", job.(name, queue, jid, bid))
          end
        end
        c.zadd("flows", 1790000000.5, fid)
      end
      puts JSON.generate(true)
      `,
      server.url,
    );
    const released = await waitFor(async () => server.redis.lindex('queue:flow-held', 0), {
      timeout: 20000,
      what: 'the leaf released',
    });
    expect(runs.map((args) => args[0])).toEqual(['root']);
    // enqueued_at spliced in front, every other byte as Ruby wrote it: 1.0 and a 20-digit integer untouched.
    expect(released).toMatch(
      /^\{"enqueued_at":\d+\.\d+,"class":"InteropStep","args":\["leaf",1\.0,12345678901234567890\],"retry":true,"queue":"flow-held"/,
    );
    expect(await server.redis.smembers('b-RubyBidLeaf000-jids')).toEqual(['jidleaf00000000000000a1']);
    const status = await app.get(FlowService).status('RubyInterop001');
    expect(status).toMatchObject({ state: 'running', total: 2, pending: 1 });
    expect(status.nodes.map((node) => node.state)).toEqual(['succeeded', 'enqueued']);
  });

  it('advances a Ruby chain link: the upstream result spliced as its last argument, byte for byte', async () => {
    const upstream = '{"id":12345678901234567890,"ratio":1.0,"name":"caf\\u00e9"}';
    await runRuby(
      `
      fid = 'RubyChain00001'
      sentinel = 'ruby-sentinel-7f3a'
      link = %Q({"class":"InteropStep","args":["reports","#{sentinel}"],"retry":true,"queue":"flow-held","jid":"jidlink00000000000000b1","created_at":1790000000.5,"bid":"RubyBidLink000"})
      Sidekiq.redis do |c|
        c.hset("flow:#{fid}", "created_at", "1790000000.5", "state", "running", "total", "2", "pending", "2", "depth", "2", "width", "1", "expiry", "2592000")
        c.hset("flow:#{fid}:0", "index", "0", "name", "fetch", "class", "InteropStep", "queue", "flow-interop", "jid", "jidsrc000000000000000b0",
               "bid", "RubyBidSrc0000", "state", "enqueued", "deps", "[]", "dependents", "[1]", "remaining", "0", "payload", "{}")
        c.hset("flow:#{fid}:1", "index", "1", "name", "store", "class", "InteropStep", "queue", "flow-held", "jid", "jidlink00000000000000b1",
               "bid", "RubyBidLink000", "state", "waiting", "deps", "[0]", "dependents", "[]", "remaining", "1", "payload", link, "pipe", sentinel)
        c.hset("b-RubyBidSrc0000", "created_at", "1790000000.5", "description", "InteropStep[:fetch]", "callback_queue", "flow-interop",
               "callbacks", "[]", "total", "1", "pending", "0", "failures", "0", "success_at", "1790000001.5")
        c.hset("b-RubyBidLink000", "created_at", "1790000000.5", "description", "InteropStep[:store]", "callback_queue", "flow-interop",
               "callbacks", "[]", "total", "0", "pending", "0", "failures", "0")
        # The source ran on a Ruby process: its status row holds the result as Ruby Wurk's status writer stores it.
        c.hset("status:jidsrc000000000000000b0", "state", "complete", "class", "InteropStep", "result", ENV.fetch('RESULT'))
        # Its batch's success callback, as Ruby's batch pushes it: a wurk process runs it.
        c.lpush("queue:flow-interop", JSON.generate("class" => "Wurk::Batch::CallbackJob", "queue" => "flow-interop", "retry" => true,
          "args" => ["RubyBidSrc0000", "Wurk::Flow::Completion", "success", { "fid" => fid, "node" => 0 }],
          "jid" => "cbjob0000000000000000b2", "created_at" => 1790000000.5, "enqueued_at" => 1790000000.5))
      end
      puts JSON.generate(true)
      `,
      server.url,
      { RESULT: upstream },
    );
    const released = await waitFor(async () => server.redis.lindex('queue:flow-held', 0), {
      timeout: 20000,
      what: 'the chain link released',
    });
    expect(released).toMatch(/^\{"enqueued_at":\d+\.\d+,"class":"InteropStep","args":\["reports",(.*)\],"retry":true/);
    expect(released).toContain(`"args":["reports",${upstream}],`);
    expect((await app.get(FlowService).status('RubyChain00001')).nodes[1]).toMatchObject({
      state: 'enqueued',
      piped: true,
    });
  });

  it("Ruby reads a chain wurk wrote: the link names its sentinel, which is its payload's last argument", async () => {
    const flow = await app.get(FlowService).create({
      nodes: chain([
        { name: 'first', class: 'RubyOnly', args: [1], queue: 'ruby-only' },
        { name: 'second', class: 'RubyOnly', args: [2], queue: 'ruby-only' },
      ]),
    });
    const read = await runRuby<{ pipe: string; args: unknown[]; track: unknown }>(
      `
      fid = ENV.fetch('FID')
      Sidekiq.redis do |c|
        pipe, payload = c.hmget("flow:#{fid}:1", "pipe", "payload")
        root = Sidekiq::Queue.new('ruby-only').first
        puts JSON.generate(pipe: pipe, args: JSON.parse(payload)['args'], track: root['track'])
      end
      `,
      server.url,
      { FID: flow.fid },
    );
    expect(read.args).toEqual([2, read.pipe]);
    expect(read.pipe).toMatch(/^wurk-pipe-[0-9a-f]{32}$/);
    expect(read.track).toBe(true);
  });

  it('Ruby reads a flow wurk wrote, and Sidekiq reads its queued root', async () => {
    const flow = await app.get(FlowService).create({
      nodes: [
        {
          name: 'later',
          class: 'RubyOnly',
          args: [2],
          queue: 'ruby-only',
          dependsOn: ['first'],
          onFailure: 'continue',
        },
        { name: 'first', class: 'RubyOnly', args: [1], queue: 'ruby-only' },
      ],
    });
    const read = await runRuby<Record<string, unknown>>(
      `
      fid = ENV.fetch('FID')
      fields = %w[index name class queue jid bid state deps dependents remaining pipe error]
      Sidekiq.redis do |c|
        header = c.hgetall("flow:#{fid}")
        nodes = (0...header['total'].to_i).map { |i| fields.zip(c.hmget("flow:#{fid}:#{i}", *fields)).to_h }
        queued = Sidekiq::Queue.new('ruby-only').map { |job| [job.klass, job.args, job.jid, job['bid']] }
        puts JSON.generate(header: header, nodes: nodes.map { |n| n.merge('deps' => JSON.parse(n['deps']), 'dependents' => JSON.parse(n['dependents'])) },
                           queued: queued, batch: c.hgetall("b-#{nodes[1]['bid']}"))
      end
      `,
      server.url,
      { FID: flow.fid },
    );
    expect(read.header).toMatchObject({ state: 'running', total: '2', pending: '2', depth: '2', width: '1' });
    expect(read.nodes).toEqual([
      expect.objectContaining({
        index: '0',
        name: 'later',
        state: 'waiting',
        deps: [1],
        dependents: [],
        remaining: '1',
      }),
      expect.objectContaining({
        index: '1',
        name: 'first',
        state: 'enqueued',
        deps: [],
        dependents: [0],
        remaining: '0',
      }),
    ]);
    expect(read.queued).toEqual([['RubyOnly', [1], flow.jids.first, flow.bids.first]]);
    expect(read.batch).toMatchObject({ total: '1', pending: '1', callback_queue: 'default' });
    expect(JSON.parse(String((read.batch as Record<string, string>).callbacks))).toEqual([
      ['success', 'Wurk::Flow::Completion', { fid: flow.fid, node: 1 }],
      ['death', 'Wurk::Flow::Completion', { fid: flow.fid, node: 1 }],
    ]);
  });
});
