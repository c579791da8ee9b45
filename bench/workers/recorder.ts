/**
 * Times a benchmark worker from inside its own process, so boot time is not
 * on the clock. Push times travel in the job as CLOCK_MONOTONIC µs, which
 * every process on the host reads alike (Node's hrtime, Ruby's clock_gettime).
 */
export function monotonicMicros(): number {
  return Number(process.hrtime.bigint()) / 1000;
}

export class BenchRecorder {
  private readonly mode = process.env.BENCH_MODE;
  private readonly jobs = Number(process.env.BENCH_JOBS);
  private count = 0;
  private first?: number;
  private readonly latencies: number[] = [];

  ready(): void {
    process.stdout.write('READY\n');
  }

  ran(pushedAt: number | undefined): void {
    const now = monotonicMicros();
    this.first ??= now;
    if (this.mode === 'latency') this.latencies.push(now - Number(pushedAt));
    this.count += 1;
    if (this.count !== this.jobs) return;
    const result = this.mode === 'latency' ? { latencies_us: this.latencies } : { first_us: this.first, last_us: monotonicMicros() };
    process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  }
}
