import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Worker, WurkModule } from '../../src';
import { BatchService, type BatchStatus } from '../../src/entries/batches';
import { usePrivateRedis } from '../support/private-redis';
import { runRuby } from '../support/sidekiq';
import { waitFor } from '../support/wait';

const heard: Array<{ event: string; bid: string; who: unknown }> = [];

@Worker({ name: 'InteropJob', queue: 'nest-interop' })
class InteropJob {
  perform(kind: string): void {
    if (kind === 'die') throw new Error('dies');
  }
}

@Worker({ name: 'InteropDone', queue: 'nest-interop' })
class InteropDone {
  perform(): void {}
  onComplete(status: BatchStatus, options: Record<string, unknown>): void {
    heard.push({ event: 'complete', bid: status.bid, who: options.who });
  }
  onSuccess(status: BatchStatus, options: Record<string, unknown>): void {
    heard.push({ event: 'success', bid: status.bid, who: options.who });
  }
  onDeath(status: BatchStatus, options: Record<string, unknown>): void {
    heard.push({ event: 'death', bid: status.bid, who: options.who });
  }
}

/**
 * A parent and its child batch as Ruby Wurk writes them (redis-rb here: Batch#first_flush_hash's fields, the child's
 * parent_bid, the parent's -kids and -pkids, each job registered as BATCH_PUSH registers it), with the parent's own
 * `jobs` block already closed: `kind` is each of the child's two jobs; both invalidated (invalidate_all) first when
 * asked.
 */
function rubyNestedBatch(parent: string, child: string, kinds: [string, string], invalidated = false): string {
  return `
    now = 1790000000.5
    callbacks = ->(who) { JSON.generate(%w[complete success death].map { |event| [event, "InteropDone", { "who" => who }] }) }
    flush = ->(c, bid, parent_bid, who) {
      c.hset("b-#{bid}", "created_at", now.to_s, "description", who, "callback_queue", "nest-interop",
             "callback_class", "InteropDone", "parent_bid", parent_bid, "tags", "[]", "linger", "",
             "callbacks", callbacks.(who), "total", "0", "pending", "0", "failures", "0")
      c.hset("b-#{bid}", "invalidated", "1") if ${invalidated}
      c.expire("b-#{bid}", 2592000)
      c.zadd("batches", now, bid)
    }
    Sidekiq.redis do |c|
      flush.(c, "${parent}", "", "parent")
      flush.(c, "${child}", "${parent}", "child")
      %w[kids pkids].each { |set| c.sadd("b-${parent}-#{set}", "${child}"); c.expire("b-${parent}-#{set}", 2592000) }
      ${JSON.stringify(kinds)}.each_with_index do |kind, i|
        jid = "rubyjob%019d" % i
        c.sadd("b-${child}-jids", jid)
        c.hincrby("b-${child}", "total", 1)
        c.hincrby("b-${child}", "pending", 1)
        c.sadd("queues", "nest-interop")
        c.lpush("queue:nest-interop", JSON.generate("class" => "InteropJob", "args" => [kind], "retry" => 0,
                "queue" => "nest-interop", "jid" => jid, "created_at" => now, "enqueued_at" => now, "bid" => "${child}"))
      end
    end
    puts JSON.generate(true)
  `;
}

/** What Ruby Wurk's Status and Callbacks read of each batch (its hash, its sets, its markers), as a Ruby expression. */
const rubyRead = (bids: string[]) => `
  Sidekiq.redis do |c|
    ${JSON.stringify(bids)}.to_h { |bid|
      [bid, { "hash" => c.hgetall("b-#{bid}"), "kids" => c.smembers("b-#{bid}-kids"), "pkids" => c.smembers("b-#{bid}-pkids"),
              "jids" => c.smembers("b-#{bid}-jids"), "markers" => %w[complete success death].select { |e| c.exists?("b-#{bid}-#{e}") },
              "ttl_kids" => c.ttl("b-#{bid}-kids"), "ttl_pkids" => c.ttl("b-#{bid}-pkids") }]
    }
  end
`;
const rubyReads = (bids: string[]) => `puts JSON.generate(${rubyRead(bids)})`;

interface RubyRead {
  hash: Record<string, string>;
  kids: string[];
  pkids: string[];
  jids: string[];
  markers: string[];
  ttl_kids: number;
  ttl_pkids: number;
}

/**
 * Nested batches shared with Ruby Wurk (docs/batches.md, "Child batches"): a child Ruby wrote, run by wurk, reports to
 * its Ruby parent as Ruby Wurk would (its complete and success callbacks counted into the parent, the parent's
 * -pkids emptied, its death marked on the parent); a nested batch wurk wrote is read from Ruby as Ruby Wurk reads one.
 * Sidekiq 6.4.1 and redis-rb: no Ruby Wurk gem runs here, so Ruby writes and reads its layout.
 */
describe('nested batches shared with Ruby (Sidekiq 6.4.1 and redis-rb)', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let app: INestApplicationContext;

  beforeAll(async () => {
    @Module({
      imports: [
        WurkModule.forRoot({ redis: { url: server.url }, server: { queues: ['nest-interop'], concurrency: 4 } }),
      ],
      providers: [InteropJob, InteropDone],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    await app.init();
  }, 30000);
  afterAll(() => app?.close());
  beforeEach(() => heard.splice(0));

  const events = () => heard.map(({ event, who }) => `${String(who)} ${event}`);

  it('a child Ruby wrote, run by wurk, finishes into its Ruby parent: the parent fires after it, as Ruby Wurk would', async () => {
    const [parent, child] = ['RubyParent0001', 'RubyChild00001'];
    await runRuby(rubyNestedBatch(parent, child, ['ok', 'ok']), server.url);
    await waitFor(() => heard.length === 4, { timeout: 20000, what: 'the four callbacks' });
    // Each pair is pushed by one script call and may run in either order; the parent's only after the child's ran.
    expect(events().slice(0, 2).sort()).toEqual(['child complete', 'child success']);
    expect(events().slice(2).sort()).toEqual(['parent complete', 'parent success']);
    const read = await runRuby<Record<string, RubyRead>>(rubyReads([parent, child]), server.url);
    // The child's complete and success callbacks were the parent's jobs (Ruby Wurk's), so the parent counts 2.
    expect(read[parent].hash).toMatchObject({ total: '2', pending: '0', complete: '1', success: '1' });
    expect(read[parent].hash).toHaveProperty('success_at');
    expect(read[parent]).toMatchObject({ kids: [child], pkids: [], jids: [], markers: ['complete', 'success'] });
    expect(read[child].hash).toMatchObject({ parent_bid: parent, pending: '0', complete: '1', success: '1' });
    expect(read[child].markers).toEqual(['complete', 'success']);
  }, 60000);

  it("a death in a Ruby child run by wurk marks and fires its Ruby parent's death once; the parent never succeeds", async () => {
    const [parent, child] = ['RubyParent0002', 'RubyChild00002'];
    await runRuby(rubyNestedBatch(parent, child, ['die', 'ok']), server.url);
    await waitFor(() => events().includes('parent complete'), { timeout: 20000, what: "the parent's complete" });
    // The first three come from the call that counted the death; the parent completes once the child's complete ran.
    expect(events().slice(0, 3).sort()).toEqual(['child complete', 'child death', 'parent death']);
    expect(events().slice(3)).toEqual(['parent complete']);
    const read = await runRuby<Record<string, RubyRead>>(rubyReads([parent, child]), server.url);
    // What Ruby Wurk's subtree_dead? reads: the durable death field, on the child and on the parent.
    expect(read[child].hash).toMatchObject({ death: '1', complete: '1' });
    // Its one job (the child's complete callback) succeeded, nothing is left: only the dead child keeps success away.
    expect(read[parent].hash).toMatchObject({ death: '1', complete: '1', pending: '0', total: '1' });
    expect(read[parent].hash).not.toHaveProperty('success');
    expect(read[parent]).toMatchObject({ pkids: [], markers: ['complete', 'death'] });
  }, 60000);

  it('a batch Ruby invalidated (invalidate_all) has its jobs skipped by wurk, each counted as a success', async () => {
    const [parent, child] = ['RubyParent0003', 'RubyChild00003'];
    await runRuby(rubyNestedBatch(parent, child, ['die', 'die'], true), server.url);
    await waitFor(() => heard.length === 4, { timeout: 20000, what: 'the four callbacks' });
    // Jobs that would die were never run: the batches succeed, as Ruby Wurk's server middleware has them.
    expect(events().slice(0, 2).sort()).toEqual(['child complete', 'child success']);
    expect(events().slice(2).sort()).toEqual(['parent complete', 'parent success']);
    expect(await app.get(BatchService).status(child)).toMatchObject({ invalidated: true, pending: 0, deadJids: [] });
  }, 60000);

  it('a nested batch wurk wrote reads in Ruby as Ruby Wurk reads one: parent_bid, -kids, -pkids, the queued job', async () => {
    const batches = app.get(BatchService);
    const parent = batches.create({ description: 'from wurk' });
    let child = '';
    await parent.jobs(async (own) => {
      const kid = own.child({ callbackQueue: 'ruby-only' });
      await kid.jobs(async (k) => {
        await k.push({ class: 'RubyOnlyJob', args: [1], queue: 'ruby-only' });
      });
      child = kid.bid;
    });
    const read = await runRuby<{ batches: Record<string, RubyRead>; queued: unknown[] }>(
      `
      reads = ${rubyRead([parent.bid, child])}
      queued = Sidekiq::Queue.new('ruby-only').map { |job| [job.klass, job.args, job['bid']] }
      puts JSON.generate(batches: reads, queued: queued)
      `,
      server.url,
    );
    expect(read.batches[child].hash).toMatchObject({ parent_bid: parent.bid, total: '1', pending: '1' });
    // Ruby Wurk's gate (live jids and pending kids both empty) holds the parent until the child finishes.
    expect(read.batches[parent.bid]).toMatchObject({ kids: [child], pkids: [child], jids: [] });
    expect(read.batches[parent.bid].ttl_kids).toBeGreaterThan(29 * 24 * 3600);
    expect(read.batches[parent.bid].ttl_pkids).toBeGreaterThan(29 * 24 * 3600);
    expect(read.queued).toEqual([['RubyOnlyJob', [1], child]]);
  }, 60000);
});
