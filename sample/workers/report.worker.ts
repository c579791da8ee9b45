import { JobContext, Worker } from '../../src';

/**
 * A tracked job: `track: true` keeps a status row (state, progress, result)
 * that `StatusService.get(jid)` and `GET /v1/jobs/:jid` read. Progress is
 * reported as it goes; wurk writes at most one update per `progressInterval`
 * and always the last one before the final state. What `perform` returns is
 * stored as the row's `result`.
 */
@Worker({ track: true })
export class ReportWorker {
  constructor(private readonly job: JobContext) {}

  async perform(rows: number): Promise<{ rows: number; sum: number }> {
    let sum = 0;
    for (let row = 1; row <= rows; row++) {
      sum += row;
      // Stands in for real work (a query, a render) so the progress is visible.
      await new Promise((resolve) => setTimeout(resolve, 250));
      this.job.progress(row, rows, `row ${row} of ${rows}`);
    }
    return { rows, sum };
  }
}
