import type { ClaimedJob } from './fetch/claimed-job';

/** How many jobs a shutdown line names one by one; the rest are counted. */
const NAMED = 10;

/** `class=X jid=Y` of a claimed job, read leniently from its bytes (the line must be written whatever they hold). */
export function jobLabel(job: ClaimedJob): string {
  try {
    const parsed = JSON.parse(job.raw) as { class?: unknown; jid?: unknown };
    return `class=${String(parsed.class)} jid=${String(parsed.jid)}`;
  } catch {
    return `(unparseable payload of ${job.raw.length} bytes) queue=${job.queue}`;
  }
}

function listed(jobs: readonly ClaimedJob[]): string {
  const named = jobs.slice(0, NAMED).map(jobLabel).join(', ');
  return jobs.length > NAMED ? `${named} and ${jobs.length - NAMED} more` : named;
}

/**
 * The one line about the jobs still running at the shutdown deadline, true
 * to what happened: handed back to their queues, or left in this
 * process's private list when Redis could not take them (never both).
 */
export function handBackLine(jobs: readonly ClaimedJob[], done: boolean): string {
  if (done)
    return `shutdown: handed back ${jobs.length} unfinished job(s) to their queues (they run again): ${listed(jobs)}`;
  return (
    `shutdown: could not hand back ${jobs.length} unfinished job(s) (Redis did not answer): ${listed(jobs)}; ` +
    "they stay in this process's private list, and another process's orphan check requeues them"
  );
}

/** Jobs whose perform is still running when wurk stopped: their AbortSignal fired and they did not stop. */
export function stillRunningLine(jobs: readonly ClaimedJob[]): string {
  return (
    `shutdown: ${jobs.length} job(s) still running after their AbortSignal fired (perform ignores context.signal): ${listed(jobs)}; ` +
    'they were handed back and run again, and whatever they do now is not settled'
  );
}
