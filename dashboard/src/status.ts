import { ApiError } from './api.js';
import { attemptsSection } from './attempts-view.js';
import { h, when } from './dom.js';
import { actionButton, card, table, View } from './view.js';

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

interface CronEntry {
  pjid: string;
  class: string;
  cron: string;
  tz: string;
  args: unknown[];
  queue: string;
  disabled: boolean;
  last_slot: number | null;
  next_slot: number | null;
  running_jid: string | null;
}

const STATE_TONE: Record<string, string> = { complete: 'ok', running: '', enqueued: '', retrying: 'warn', interrupted: 'warn', failed: 'bad', dead: 'bad' };

/** States whose row means an attempt failed, so the attempts log has records. */
const HAS_HISTORY = new Set(['failed', 'retrying', 'dead', 'interrupted', 'scheduled']);

export const jobStatus: View = async (context) => {
  const jid = context.path[1] ?? '';
  const lookup = h(
    'form',
    {
      class: 'search',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const value = String(new FormData(event.currentTarget as HTMLFormElement).get('jid') ?? '').trim();
        if (value) context.navigate(`#/jobs/${value}`);
      },
    },
    h('input', { name: 'jid', placeholder: 'jid of a tracked job', value: jid, size: 30, 'aria-label': 'jid' }),
    h('button', { class: 'btn', type: 'submit' }, 'Look up'),
  );
  if (!jid) return card('Job status', lookup, h('p', { class: 'muted' }, 'Workers with @Worker({ track: true }) keep a status row with progress and result.'));
  let record: StatusRecord;
  try {
    record = await context.api.get<StatusRecord>(`/jobs/${encodeURIComponent(jid)}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return card('Job status', lookup, h('p', { class: 'empty' }, `No status for ${jid}: unknown, untracked or expired.`), attemptsSection(context.api, jid));
    throw error;
  }
  const percent = record.total ? Math.min(100, Math.round(((record.progress ?? 0) * 100) / record.total)) : null;
  const row = (label: string, value: Node | string) => h('tr', {}, h('th', {}, label), h('td', {}, value));
  return card(
    `Job ${record.jid}`,
    lookup,
    h('p', {}, h('span', { class: `badge big ${STATE_TONE[record.state] ?? ''}` }, record.state), ' ', h('strong', {}, record.class ?? ''), ` on ${record.queue ?? '?'}`),
    percent === null ? null : h('div', { class: 'progress', role: 'progressbar', 'aria-valuenow': percent }, h('div', { class: `bar w${Math.round(percent / 5) * 5}` }), h('span', {}, `${record.progress} / ${record.total} (${percent}%)`)),
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
        row('Result', h('pre', {}, record.result === null || record.result === undefined ? '—' : JSON.stringify(record.result, null, 2))),
      ),
    ),
    // A first attempt still running or done has no history: not asked for (a 404 is a console error in the browser).
    (record.attempt ?? 1) > 1 || HAS_HISTORY.has(record.state) ? attemptsSection(context.api, jid) : null,
  );
};

export const cron: View = async (context) => {
  const { entries } = await context.api.get<{ entries: CronEntry[] }>('/cron');
  return card(
    'Periodic jobs',
    table(
      ['Job', 'Schedule', 'Queue', 'Last slot', 'Next', 'State', ''],
      entries.map((entry) =>
        h(
          'tr',
          {},
          h('td', {}, h('strong', {}, entry.class), h('div', { class: 'muted args' }, JSON.stringify(entry.args))),
          h('td', {}, h('code', {}, entry.cron), entry.tz && entry.tz !== 'UTC' ? h('div', { class: 'muted' }, entry.tz) : null),
          h('td', {}, entry.queue),
          h('td', {}, when(entry.last_slot)),
          h('td', {}, entry.disabled ? '—' : when(entry.next_slot)),
          h('td', {}, entry.disabled ? h('span', { class: 'badge warn' }, 'disabled') : h('span', { class: 'badge ok' }, 'enabled'), entry.running_jid ? h('div', { class: 'muted' }, `running ${entry.running_jid}`) : null),
          h(
            'td',
            { class: 'actions' },
            context.canAct ? actionButton(context, entry.disabled ? 'Enable' : 'Disable', () => context.api.post(`/cron/${entry.pjid}/${entry.disabled ? 'enable' : 'disable'}`)) : null,
          ),
        ),
      ),
      'No periodic jobs are declared.',
    ),
  );
};
