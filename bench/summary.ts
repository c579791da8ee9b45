/**
 * The table `npm run bench` ends with (issue #43): every figure of wurk with
 * the floor and the peers beside it, from the passes that ran before it, and
 * wurk's ratio against the target set for it.
 *
 * - processing, worker CPU, Redis CPU, peak RSS: the `noop` shape, one process;
 * - latency: the stream of the pickup pass (BENCH_LATENCY_JOBS jobs BENCH_LATENCY_GAP_MS apart);
 * - idle RSS: settled (the memory pass), or right after boot when that pass did not run;
 * - enqueue: one by one and in batches of 1,000, wurk as an app calls it (`ClientService`).
 */

/** The columns of the table: wurk, its peers and the floor. */
export type Peer = 'wurk' | 'nestjs-bullmq' | 'bullmq' | 'sidekiq' | 'floor';

const PEERS: Peer[] = ['wurk', 'nestjs-bullmq', 'bullmq', 'sidekiq', 'floor'];
const JOB_SYSTEMS: Peer[] = ['wurk', 'nestjs-bullmq', 'bullmq', 'sidekiq'];

/**
 * What the table reads of each pass's results, and nothing more: the passes (processing.ts, memory.ts, enqueue.ts)
 * hand in their own results, which have these fields among others, so this file depends on none of them.
 */
export interface FloorTableInput {
  throughput: Array<{
    side: string;
    peer: Peer;
    shape: string;
    processes: number;
    jobsPerSecond: number;
    workerCpuUsPerJob: number;
    redisCpuUsPerJob: number;
    peakRssMb: number;
  }>;
  latency: Array<{ side: string; peer: Peer; p50: number; p99: number; idleRssMb: number }>;
  idle?: Array<{ peer: Peer; settled: { rssMb: number } }>;
  enqueue?: Partial<Record<Peer, { single: { jobsPerSecond: number }; bulk: { jobsPerSecond: number } }>>;
}

interface Row {
  label: string;
  cells: Partial<Record<Peer, string>>;
  target: string;
}

const int = (value: number) => Math.round(value).toLocaleString('en-US');
const one = (value: number) => value.toFixed(1);
const two = (value: number) => value.toFixed(2);

/** "0.46× the floor (target ≥ 0.70×: missed)". */
function against(value: number, reference: number | undefined, target: number, what: string, atLeast: boolean): string {
  if (reference === undefined || !Number.isFinite(reference)) return '';
  const ratio = value / reference;
  const met = atLeast ? ratio >= target : ratio <= target;
  return `${two(ratio)}× ${what} (target ${atLeast ? '≥' : '≤'} ${two(target)}×: ${met ? 'met' : 'missed'})`;
}

export function floorRows({ throughput, latency, idle, enqueue }: FloorTableInput): Row[] {
  const rows: Row[] = [];
  const counts = [...new Set(throughput.filter((r) => r.shape === 'noop').map((r) => r.processes))].sort(
    (a, b) => a - b,
  );
  const noop = new Map(
    throughput.filter((r) => r.shape === 'noop' && r.processes === counts[0]).map((r) => [r.peer, r]),
  );
  const pickup = new Map(latency.map((r) => [r.peer, r]));
  const settled = new Map((idle ?? []).map((r) => [r.peer, r]));
  const cells = <T>(from: Map<Peer, T>, show: (value: T) => string) => {
    const out: Partial<Record<Peer, string>> = {};
    for (const peer of PEERS) {
      const value = from.get(peer);
      if (value !== undefined) out[peer] = show(value);
    }
    return out;
  };
  const wurk = noop.get('wurk');
  const base = noop.get('floor');
  if (noop.size > 0) {
    rows.push({
      label: `processing jobs/s (noop ×${counts[0]})`,
      cells: cells(noop, (r) => int(r.jobsPerSecond)),
      target: wurk ? against(wurk.jobsPerSecond, base?.jobsPerSecond, 0.7, 'the floor', true) : '',
    });
    rows.push({
      label: 'worker CPU µs/job',
      cells: cells(noop, (r) => one(r.workerCpuUsPerJob)),
      target: wurk ? against(wurk.workerCpuUsPerJob, base?.workerCpuUsPerJob, 1.5, "the floor's", false) : '',
    });
    const lowestPeer = Math.min(
      ...JOB_SYSTEMS.filter((peer) => peer !== 'wurk' && noop.has(peer)).map(
        (peer) => noop.get(peer)!.redisCpuUsPerJob,
      ),
    );
    rows.push({
      label: 'Redis CPU µs/job',
      cells: cells(noop, (r) => one(r.redisCpuUsPerJob)),
      target:
        wurk && Number.isFinite(lowestPeer)
          ? `lowest of the job systems: ${wurk.redisCpuUsPerJob <= lowestPeer ? 'met' : 'missed'}`
          : '',
    });
    rows.push({
      label: 'jobs/s one Redis core carries',
      cells: cells(noop, (r) => int(1e6 / r.redisCpuUsPerJob)),
      target: '(1,000,000 ÷ Redis CPU µs/job)',
    });
  }
  if (pickup.size > 0) {
    const ours = pickup.get('wurk');
    const floorPickup = pickup.get('floor');
    const sidekiq = pickup.get('sidekiq');
    const p99 = ours ? against(ours.p99, floorPickup?.p99, 1.2, "the floor's p99", false) : '';
    const p50 = ours && sidekiq ? `p50 ≤ Sidekiq's: ${ours.p50 <= sidekiq.p50 ? 'met' : 'missed'}` : '';
    rows.push({
      label: 'latency p50 / p99 ms (stream)',
      cells: cells(pickup, (r) => `${two(r.p50 / 1000)} / ${two(r.p99 / 1000)}`),
      target: [p99, p50].filter(Boolean).join('; '),
    });
  }
  if (noop.size > 0) {
    const idleOf = (peer: Peer): number | undefined => settled.get(peer)?.settled.rssMb ?? pickup.get(peer)?.idleRssMb;
    const rss = new Map<Peer, [number, number | undefined]>();
    for (const [peer, r] of noop) rss.set(peer, [r.peakRssMb, idleOf(peer)]);
    const nest = rss.get('nestjs-bullmq');
    const ours = rss.get('wurk');
    const met = (a: number | undefined, b: number | undefined) =>
      a === undefined || b === undefined ? '?' : a <= b ? 'met' : 'missed';
    rows.push({
      label: `peak / idle RSS MB (idle ${idle ? 'settled' : 'at boot'})`,
      cells: cells(rss, ([peak, rest]) => `${int(peak)} / ${rest === undefined ? '–' : int(rest)}`),
      target: ours && nest ? `≤ @nestjs/bullmq's: peak ${met(ours[0], nest[0])}, idle ${met(ours[1], nest[1])}` : '',
    });
  }
  if (enqueue) {
    type Enqueued = NonNullable<NonNullable<FloorTableInput['enqueue']>[Peer]>;
    const map = new Map(Object.entries(enqueue) as Array<[Peer, Enqueued]>);
    const ours = enqueue.wurk;
    rows.push({
      label: 'enqueue one by one / bulk jobs/s',
      cells: cells(map, (r) => `${int(r.single.jobsPerSecond)} / ${int(r.bulk.jobsPerSecond)}`),
      target: ours
        ? against(ours.bulk.jobsPerSecond, enqueue.sidekiq?.bulk.jobsPerSecond, 2, "Sidekiq's push_bulk", true)
        : '',
    });
  }
  return rows;
}

export function printFloorTable(input: FloorTableInput): void {
  const rows = floorRows(input);
  if (rows.length === 0) return;
  const names = new Map<Peer, string>();
  for (const r of [...input.throughput, ...input.latency]) names.set(r.peer, r.side);
  const present = PEERS.filter((peer) => rows.some((row) => row.cells[peer] !== undefined));
  const widths = present.map((peer) =>
    Math.max((names.get(peer) ?? peer).length, ...rows.map((row) => (row.cells[peer] ?? '–').length)),
  );
  const labelWidth = Math.max(...rows.map((row) => row.label.length));
  console.log('\nwurk beside its peers and the floor (issue #43; wurk as the app calls it, default options)');
  console.log(
    `  ${''.padEnd(labelWidth)}  ${present.map((peer, k) => (names.get(peer) ?? peer).padStart(widths[k])).join('  ')}  wurk against its target`,
  );
  for (const row of rows) {
    console.log(
      `  ${row.label.padEnd(labelWidth)}  ${present.map((peer, k) => (row.cells[peer] ?? '–').padStart(widths[k])).join('  ')}  ${row.target}`,
    );
  }
}
