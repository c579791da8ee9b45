import { pathSegment } from './path.js';
import { Api, ApiError } from './api.js';
import { h, replace, when } from './dom.js';
import { table } from './view.js';

/** One record of a job's attempts log, as GET /v1/jobs/:jid/attempts returns it (docs/job-history.md). */
export interface AttemptRecord {
  attempt: number;
  at: number;
  outcome: string;
  retry_at?: number;
  error_class?: string;
  error_message?: string;
  backtrace?: string[];
  process?: string;
  queue?: string;
  reason?: string;
}

const OUTCOME_TONE: Record<string, string> = {
  succeeded: 'ok',
  retrying: 'warn',
  interrupted: 'warn',
  dead: 'bad',
  discarded: 'bad',
};

/**
 * Renders the attempts of `jid` into `container` (its own section, so any
 * job page can host it): a table of every recorded attempt with its
 * outcome, error class and message, first frames and the process that ran
 * it. A job with no history (never failed, or expired) says so.
 */
export async function renderAttempts(api: Api, jid: string, container: HTMLElement): Promise<void> {
  let attempts: AttemptRecord[];
  try {
    ({ attempts } = await api.get<{ jid: string; attempts: AttemptRecord[] }>(`/jobs/${pathSegment(jid)}/attempts`));
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      replace(
        container,
        h('h3', {}, 'Attempts'),
        h('p', { class: 'empty' }, 'No failed attempts recorded (never failed, or the history expired).'),
      );
      return;
    }
    throw error;
  }
  replace(
    container,
    h('h3', {}, 'Attempts'),
    table(
      ['#', 'When', 'Outcome', 'Error', 'Process'],
      attempts.map((record) =>
        h(
          'tr',
          { class: 'attempt', 'data-attempt': record.attempt, 'data-outcome': record.outcome },
          h('td', {}, String(record.attempt)),
          h('td', {}, when(record.at)),
          h(
            'td',
            {},
            h('span', { class: `badge ${OUTCOME_TONE[record.outcome] ?? ''}` }, record.outcome),
            record.retry_at ? h('div', { class: 'muted' }, 'next ', when(record.retry_at)) : null,
          ),
          h(
            'td',
            {},
            record.error_class ? h('strong', { class: 'error-class' }, record.error_class) : null,
            record.error_message ? h('div', { class: 'error-message' }, record.error_message) : null,
            record.reason ? h('div', { class: 'muted' }, record.reason) : null,
            record.backtrace?.length ? h('pre', { class: 'backtrace' }, record.backtrace.join('\n')) : null,
          ),
          h('td', { class: 'muted' }, record.process ?? '—'),
        ),
      ),
    ),
  );
}

/** A `#job-attempts` section that fills itself in: a job page places it under the payload and moves on. */
export function attemptsSection(api: Api, jid: string): HTMLElement {
  const container = h(
    'section',
    { id: 'job-attempts', class: 'attempts' },
    h('p', { class: 'muted' }, 'Loading attempts…'),
  );
  renderAttempts(api, jid, container).catch((error: unknown) =>
    replace(
      container,
      h('p', { class: 'empty' }, `Attempts unavailable: ${error instanceof Error ? error.message : String(error)}`),
    ),
  );
  return container;
}
