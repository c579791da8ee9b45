import { hashSegment, pathSegment } from './path.js';
import { attemptsSection } from './attempts-view.js';
import { h, when } from './dom.js';
import { jobLink } from './queues.js';
import { backtraceLines } from './sets.js';
import { actionButton, card, JobJson, View, ViewContext } from './view.js';

interface StatusRecord {
  jid: string;
  state: string;
  queue: string | null;
  class: string | null;
  enqueued_at: number | null;
  started_at: number | null;
  finished_at: number | null;
  progress: number | null;
  total: number | null;
  message: string | null;
  result: unknown;
  error_class: string | null;
  error_message: string | null;
  attempt: number | null;
}

/** One place the API found the jid (GET /v1/jobs/:jid/locations). */
type Location =
  | { where: 'queue'; queue: string; position: number; job: JobJson }
  | ({ where: 'schedule' | 'retry' | 'dead' } & JobJson)
  | { where: 'busy'; process: string; tid: string; queue: string | null; run_at: number | null; job: JobJson };

/** An iterable job's saved progress (it-<jid>), as the locations route reads it. */
interface Iteration {
  executions: number | null;
  cursor: string | null;
  runtime: number | null;
  cancelled_at: number | null;
}

interface Locations {
  jid: string;
  locations: Location[];
  status: StatusRecord | null;
  iteration: Iteration | null;
}

const STATE_TONE: Record<string, string> = {
  complete: 'ok',
  running: '',
  enqueued: '',
  retrying: 'warn',
  interrupted: 'warn',
  failed: 'bad',
  dead: 'bad',
};
/** Status states that mean an attempt failed, so the attempts log has records. */
const HAS_HISTORY = new Set(['failed', 'retrying', 'dead', 'interrupted', 'scheduled']);

const SET_ROUTE = { schedule: 'scheduled', retry: 'retries', dead: 'dead' } as const;

function jobOf(location: Location): JobJson {
  return location.where === 'queue' || location.where === 'busy' ? location.job : location;
}

function row(label: string, value: Node | string, actions: Node[] = []): HTMLElement {
  return h(
    'tr',
    {},
    h('th', {}, label),
    h('td', {}, value),
    actions.length > 0 ? h('td', { class: 'actions' }, actions) : null,
  );
}

/** What an admin may do to the job where it is: the same API calls as the queue and set pages. */
function actions(context: ViewContext, location: Location): Node[] {
  const jid = jobOf(location).jid;
  if (!context.canAct || !jid || location.where === 'busy') return [];
  const { api } = context;
  const id = pathSegment(jid);
  if (location.where === 'queue') {
    return [
      actionButton(context, 'Delete', () => api.delete(`/queues/${pathSegment(location.queue)}/jobs/${id}`), {
        danger: true,
        confirm: `Delete job ${jid} from ${location.queue}?`,
      }),
    ];
  }
  const set = SET_ROUTE[location.where];
  return [
    actionButton(context, location.where === 'dead' ? 'Retry now' : 'Run now', () => api.post(`/${set}/${id}/run`)),
    location.where === 'dead'
      ? null
      : actionButton(context, 'Kill', () => api.post(`/${set}/${id}/kill`), { danger: true }),
    actionButton(context, 'Delete', () => api.delete(`/${set}/${id}`), {
      danger: true,
      confirm: `Delete job ${jid} from ${location.where}?`,
    }),
  ].filter((button): button is HTMLButtonElement => button !== null);
}

/** Where the job is, each with a link to the page that acts on it. */
function whereRow(context: ViewContext, location: Location): HTMLElement {
  const jid = hashSegment(jobOf(location).jid ?? '');
  const acts = actions(context, location);
  if (location.where === 'queue') {
    return row(
      'Waiting',
      h(
        'span',
        {},
        'in queue ',
        h('a', { href: `#/queues/${hashSegment(location.queue)}` }, location.queue),
        `, ${location.position + 1} from the newest end`,
      ),
      acts,
    );
  }
  if (location.where === 'busy')
    return row(
      'Running',
      h(
        'span',
        {},
        'on ',
        h('a', { href: '#/busy' }, location.process),
        ` (${location.tid}), started `,
        when(location.run_at),
      ),
    );
  const label = location.where === 'schedule' ? 'Scheduled' : location.where === 'retry' ? 'Retrying' : 'Dead';
  const time = location.where === 'dead' ? 'died ' : 'runs ';
  return row(
    label,
    h(
      'span',
      {},
      h('a', { href: `#/${SET_ROUTE[location.where]}?jid=${jid}` }, `in ${location.where}`),
      `, ${time}`,
      when(location.at ?? null),
    ),
    acts,
  );
}

/** An iterable job's cursor and runs; an admin may cancel it (it stops at its next cursor save, within 5 s). */
function iterationCard(context: ViewContext, jid: string, iteration: Iteration): HTMLElement {
  const cancel =
    context.canAct && iteration.cancelled_at === null
      ? [
          actionButton(context, 'Cancel iteration', () => context.api.post(`/jobs/${pathSegment(jid)}/cancel`), {
            danger: true,
            confirm: `Cancel iterable job ${jid}? It stops at its next cursor save, within about 5 seconds.`,
          }),
        ]
      : [];
  return card(
    'Iteration (iterable job)',
    h(
      'table',
      { class: 'facts iteration' },
      h(
        'tbody',
        {},
        row('Cursor', h('code', {}, iteration.cursor ?? '—'), cancel),
        row('Runs', String(iteration.executions ?? '—')),
        row('Time iterating', iteration.runtime === null ? '—' : `${iteration.runtime.toFixed(1)} s`),
        row('Cancelled', iteration.cancelled_at === null ? 'no' : when(iteration.cancelled_at)),
      ),
    ),
  );
}

function statusCard(record: StatusRecord): HTMLElement {
  const percent = record.total ? Math.min(100, Math.round(((record.progress ?? 0) * 100) / record.total)) : null;
  return card(
    'Status (tracked job)',
    h(
      'p',
      {},
      h('span', { class: `badge big ${STATE_TONE[record.state] ?? ''}` }, record.state),
      ' ',
      h('strong', {}, record.class ?? ''),
      ` on ${record.queue ?? '?'}`,
    ),
    percent === null
      ? null
      : h(
          'div',
          { class: 'progress', role: 'progressbar', 'aria-valuenow': percent },
          h('div', { class: `bar w${Math.round(percent / 5) * 5}` }),
          h('span', {}, `${record.progress} / ${record.total} (${percent}%)`),
        ),
    h(
      'table',
      { class: 'facts' },
      h(
        'tbody',
        {},
        row('Message', record.message ?? '—'),
        row('Enqueued', when(record.enqueued_at)),
        row('Started', when(record.started_at)),
        row('Finished', when(record.finished_at)),
        row('Attempt', String(record.attempt ?? '—')),
        row('Error', record.error_class ? `${record.error_class}: ${record.error_message ?? ''}` : '—'),
        row(
          'Result',
          h(
            'pre',
            {},
            record.result === null || record.result === undefined ? '—' : JSON.stringify(record.result, null, 2),
          ),
        ),
      ),
    ),
  );
}

/**
 * The stored payload, pretty-printed from its bytes (a Ruby 1.0 stays 1.0), with the error and backtrace when it
 * failed.
 */
async function payloadCard(job: JobJson): Promise<HTMLElement> {
  const lines = await backtraceLines(job.payload?.error_backtrace);
  return card(
    'Payload',
    job.error_class
      ? h('p', { class: 'error' }, h('strong', {}, job.error_class), ': ', job.error_message ?? '')
      : null,
    lines.length > 0
      ? h(
          'details',
          {},
          h('summary', {}, `backtrace (${lines.length} lines)`),
          h('pre', { class: 'backtrace' }, lines.join('\n')),
        )
      : null,
    h('pre', { class: 'payload' }, job.payload ? JSON.stringify(job.payload, null, 2) : (job.raw ?? '')),
  );
}

/** A job pushed in a batch carries its `bid` (Sidekiq Pro's): a link to that batch's page. */
function batchLink(job: JobJson | null): HTMLElement | null {
  const bid = job?.payload?.bid;
  if (typeof bid !== 'string' || bid === '') return null;
  return h(
    'p',
    { class: 'in-batch' },
    'In batch ',
    h('a', { class: 'bid', href: `#/batches/${hashSegment(bid)}` }, bid),
  );
}

function lookupForm(context: ViewContext, jid: string): HTMLElement {
  return h(
    'form',
    {
      class: 'search',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const value = String(new FormData(event.currentTarget as HTMLFormElement).get('jid') ?? '').trim();
        if (value) context.navigate(`#/jobs/${hashSegment(value)}`);
      },
    },
    h('input', { name: 'jid', placeholder: 'jid', value: jid, size: 30, 'aria-label': 'jid' }),
    h('button', { class: 'btn', type: 'submit' }, 'Look up'),
  );
}

/**
 * Any job by jid: where it is now (queue, schedule, retry, dead, running),
 * its stored payload, and its status row when its class is tracked. A job
 * found nowhere has finished (or never existed), and the page says so.
 */
export const job: View = async (context) => {
  const jid = context.path[1] ?? '';
  if (!jid)
    return card(
      'Jobs',
      lookupForm(context, ''),
      h(
        'p',
        { class: 'muted' },
        'Find any job by its jid: where it waits, its payload, its status row when its worker sets track: true.',
      ),
    );
  const found = await context.api.get<Locations>(`/jobs/${pathSegment(jid)}/locations`);
  const first = found.locations[0];
  const stored = first ? jobOf(first) : null;
  const nowhere = h(
    'p',
    { class: 'empty' },
    found.status
      ? 'Not in any queue or set now: the status row below is what is left of it.'
      : 'Not waiting, scheduled, retrying, dead or running: it finished, or was never pushed. An untracked job leaves no record once it is done; @Worker({ track: true }) keeps a status row.',
  );
  return h(
    'div',
    { class: 'stack' },
    card(
      `Job ${found.jid}`,
      lookupForm(context, jid),
      stored ? jobLink(stored) : null,
      batchLink(stored),
      found.locations.length === 0
        ? nowhere
        : h(
            'table',
            { class: 'facts where' },
            h('tbody', {}, ...found.locations.map((location) => whereRow(context, location))),
          ),
    ),
    found.iteration ? iterationCard(context, found.jid, found.iteration) : null,
    found.status ? statusCard(found.status) : null,
    stored ? await payloadCard(stored) : null,
    attemptsOf(context, found, stored),
  );
};

/**
 * The attempts log under the payload. Read at once when the job shows a
 * failure (its stored error or retry count, or its status row); otherwise on
 * request, since a job that never failed has no log and the read would be a 404.
 */
function attemptsOf(context: ViewContext, found: Locations, stored: JobJson | null): HTMLElement {
  const failed =
    Boolean(stored?.error_class) ||
    (stored?.retry_count ?? null) !== null ||
    HAS_HISTORY.has(found.status?.state ?? '');
  if (failed) return attemptsSection(context.api, found.jid);
  const container: HTMLElement = h('section', { id: 'job-attempts', class: 'attempts' });
  const look = h(
    'button',
    {
      class: 'btn ghost',
      type: 'button',
      onclick: () => container.replaceWith(attemptsSection(context.api, found.jid)),
    },
    'Show failed attempts',
  );
  container.append(look);
  return container;
}
