/**
 * Times a benchmark worker from inside its own process, so boot time is not
 * on the clock. Push times travel in the job as CLOCK_MONOTONIC µs, which
 * every process on the host reads alike (Node's hrtime, Ruby's clock_gettime).
 *
 * Protocol (shared with sidekiq_worker.rb): `READY` once the worker fetches;
 * in throughput mode a `PROGRESS {"count","first_us","last_us"}` line every
 * 50 ms while jobs run (several processes share one queue, so none of them
 * knows when the whole run is over: the bench sums their counts); in latency
 * mode `RESULT {"latencies_us":[...]}` after BENCH_JOBS jobs.
 */
export function monotonicMicros(): number {
  return Number(process.hrtime.bigint()) / 1000;
}

/** The work a benchmark job does (BENCH_SHAPE); payload shapes do nothing but carry their bytes. */
export async function runShape(shape: string | undefined): Promise<void> {
  if (shape === 'cpu') {
    let acc = 0;
    for (let i = 1; i <= 20000; i++) acc += Math.sqrt(i) * Math.log(i);
    if (acc < 0) throw new Error('unreachable: keeps the loop from being dropped');
  } else if (shape === 'io') {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export class BenchRecorder {
  readonly shape = process.env.BENCH_SHAPE;
  private readonly mode = process.env.BENCH_MODE;
  private readonly jobs = Number(process.env.BENCH_JOBS);
  private count = 0;
  private reported = 0;
  private first?: number;
  private last?: number;
  private readonly latencies: number[] = [];

  ready(): void {
    process.stdout.write('READY\n');
    if (this.mode === 'throughput') setInterval(() => this.progress(), 50).unref();
  }

  started(pushedAt: number | undefined): void {
    const now = monotonicMicros();
    this.first ??= now;
    if (this.mode !== 'latency') return;
    this.latencies.push(now - Number(pushedAt));
    if (this.latencies.length === this.jobs)
      process.stdout.write(`RESULT ${JSON.stringify({ latencies_us: this.latencies })}\n`);
  }

  finished(): void {
    this.last = monotonicMicros();
    this.count += 1;
  }

  private progress(): void {
    if (this.count === this.reported) return;
    this.reported = this.count;
    process.stdout.write(
      `PROGRESS ${JSON.stringify({ count: this.count, first_us: this.first, last_us: this.last })}\n`,
    );
  }
}
