import type { Heartbeat } from '../../src/server/heartbeat/heartbeat';
import type { RemoteSignal } from '../../src/server/heartbeat/heartbeat-port';
import { newProcessIdentity } from '../../src/server/identity';
import { Keys } from '../../src/redis/keys';
import { SIDEKIQ_VERSIONS, useSidekiqRuby } from '../support/sidekiq';
import { waitFor } from '../support/wait';
import { startLiveHeartbeat } from '../support/live-heartbeat';
import { usePrivateRedis } from '../support/private-redis';

interface RubyProcess {
  identity: string;
  hostname: string;
  pid: number;
  tag: string;
  labels: string[];
  concurrency: number;
  queues: string[];
  busy: number;
  quiet: string;
  stopping: boolean;
  started_at: number;
  beat: number;
  rss: number;
  /** Process#queues and #weights: 8.1 derives them from `capsules`. */
  api_queues: string[] | null;
  api_weights: unknown;
  capsules: unknown;
}

interface RubyWork {
  process: string;
  tid: string;
  queue: string;
  run_at: number;
  jid: string;
  klass: string;
  args: unknown[];
}

const READ = `
processes = Sidekiq::ProcessSet.new.map do |p|
  { identity: p.identity, hostname: p['hostname'], pid: p['pid'], tag: p['tag'], labels: p['labels'],
    concurrency: p['concurrency'], queues: p['queues'], busy: p['busy'], quiet: p['quiet'],
    stopping: p.stopping?, started_at: p['started_at'], beat: p['beat'], rss: p['rss'],
    api_queues: p.respond_to?(:queues) ? p.queues : nil, api_weights: p.respond_to?(:weights) ? p.weights : nil, capsules: p['capsules'] }
end
work = work_entries.map do |w|
  { process: w['process'], tid: w['tid'], queue: w['queue'], run_at: w['run_at'],
    jid: w['payload']['jid'], klass: w['payload']['class'], args: w['payload']['args'] }
end
s = Sidekiq::Stats.new
stats = { processed: s.processed, failed: s.failed, processes_size: s.processes_size, workers_size: s.workers_size }
puts JSON.generate({ processes: processes, work: work, workers_size: Sidekiq::Workers.new.size, stats: stats })
`;

/** Sidekiq's Web UI rendered in-process with Rack::MockRequest: no browser, no port. */
const RENDER_BUSY = `
require 'sidekiq/web'; require 'rack/mock'; require 'securerandom'
app = Rack::Builder.new { use Rack::Session::Cookie, secret: SecureRandom.hex(64); run Sidekiq::Web }
response = Rack::MockRequest.new(app).get('/busy')
puts JSON.generate({ status: response.status, body: response.body })
`;

const PAYLOAD_A =
  '{"retry":true,"queue":"critical","args":[12,1.0,"ü"],"class":"SlowJob","jid":"dd89a932c9d7c5b49752359d","created_at":1795933819.8149068,"enqueued_at":1795933819.8150513}';
const PAYLOAD_B =
  '{"retry":true,"queue":"default","args":[],"class":"Reports::Nightly","jid":"0f0f0f0f0f0f0f0f0f0f0f0f","created_at":1795933820.1,"enqueued_at":1795933820.2}';

describe.each(SIDEKIQ_VERSIONS)("Sidekiq $version's API and Web UI read wurk's heartbeat", (version) => {
  const server = usePrivateRedis();
  const ruby = useSidekiqRuby(version, server);
  let heartbeat: Heartbeat;
  const identity = newProcessIdentity();
  const received: RemoteSignal[] = [];
  const runAt = Math.floor(Date.now() / 1000) - 5;

  beforeAll(async () => {
    heartbeat = await startLiveHeartbeat(server.url, identity, received);
    heartbeat.setWork([
      { tid: 'p1', queue: 'critical', payload: PAYLOAD_A, runAt },
      { tid: 'p2', queue: 'default', payload: PAYLOAD_B, runAt: runAt + 1 },
    ]);
    heartbeat.countProcessed(9);
    heartbeat.countFailed(7);
    await waitFor(
      async () =>
        (await server.redis.hget(identity.identity, 'busy')) === '2' &&
        (await server.redis.get(Keys.statProcessed)) === '9',
      {
        timeout: 15000,
        what: 'work and counters written',
      },
    );
  });

  afterAll(async () => {
    await heartbeat.stop();
  });

  it('ProcessSet, Workers and Stats see the process, its in-flight jobs and its counters', async () => {
    const read = await ruby.run<{
      processes: RubyProcess[];
      work: RubyWork[];
      workers_size: number;
      stats: Record<string, number>;
    }>(READ);

    expect(read.processes).toHaveLength(1);
    const [process] = read.processes;
    expect(process).toMatchObject({
      identity: identity.identity,
      hostname: identity.hostname,
      pid: identity.pid,
      tag: 'billing',
      labels: ['blue'],
      concurrency: 10,
      queues: ['critical', 'default'],
      busy: 2,
      quiet: 'false',
      stopping: false,
    });
    // 8.0.9+ reads queues and weights per capsule; older versions the flat fields, which wurk writes too.
    const capsules = { default: { concurrency: 10, mode: 'weighted', weights: { critical: 2, default: 1 } } };
    expect(process.capsules).toEqual(capsules);
    if (version.major >= 8)
      expect([process.api_queues, process.api_weights]).toEqual([['critical', 'default'], { critical: 2, default: 1 }]);
    else if (version.major === 7)
      expect([process.api_queues, process.api_weights]).toEqual([
        ['critical', 'default'],
        [{ critical: 2, default: 1 }],
      ]);
    expect(process.beat).toBeGreaterThan(Date.now() / 1000 - 30);
    expect(process.rss).toBeGreaterThan(10000);

    const work = [...read.work].sort((a, b) => a.tid.localeCompare(b.tid));
    expect(work).toEqual([
      {
        process: identity.identity,
        tid: 'p1',
        queue: 'critical',
        run_at: runAt,
        jid: 'dd89a932c9d7c5b49752359d',
        klass: 'SlowJob',
        args: [12, 1.0, 'ü'],
      },
      {
        process: identity.identity,
        tid: 'p2',
        queue: 'default',
        run_at: runAt + 1,
        jid: '0f0f0f0f0f0f0f0f0f0f0f0f',
        klass: 'Reports::Nightly',
        args: [],
      },
    ]);
    expect(read.workers_size).toBe(2);
    expect(read.stats).toEqual({ processed: 9, failed: 7, processes_size: 1, workers_size: 2 });
  });

  // Only where the Web UI runs: 8.x's needs rack 3.2 and Ruby 3.2, Debian has 2.2 and 3.1 (README, interop).
  const webUiIt = version.webUi ? it : () => undefined;
  webUiIt("the Web UI's Busy page renders the process and its jobs", async () => {
    const page = await ruby.run<{ status: number; body: string }>(RENDER_BUSY);
    expect(page.status).toBe(200);
    expect(page.body).toContain(`${identity.hostname}:${identity.pid}`);
    expect(page.body).toContain('billing');
    expect(page.body).toContain('SlowJob');
    expect(page.body).toContain('Reports::Nightly');
    expect(page.body).toContain('dd89a932c9d7c5b49752359d');
  });

  it('quiet! and stop! from Sidekiq::ProcessSet reach the handlers, and quiet becomes "true"', async () => {
    await ruby.run('Sidekiq::ProcessSet.new.each(&:quiet!); puts "{}"');
    await waitFor(() => received.includes('TSTP'), { timeout: 15000, what: 'TSTP delivered' });
    await waitFor(async () => (await server.redis.hget(identity.identity, 'quiet')) === 'true', {
      timeout: 15000,
      what: 'quiet true',
    });
    const quiet = await ruby.run<{ stopping: boolean }>(
      'puts JSON.generate({ stopping: Sidekiq::ProcessSet.new.first.stopping? })',
    );
    expect(quiet.stopping).toBe(true);

    await ruby.run('Sidekiq::ProcessSet.new.each(&:stop!); puts "{}"');
    await waitFor(() => received.includes('TERM'), { timeout: 15000, what: 'TERM delivered' });
    expect(received).toEqual(['TSTP', 'TERM']);
  });
});
