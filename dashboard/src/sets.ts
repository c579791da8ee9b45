import { argsText, h, when } from './dom.js';
import { jobLink } from './queues.js';
import { actionButton, card, JobJson, pageOf, pager, table, View, ViewContext } from './view.js';

type Segment = 'scheduled' | 'retries' | 'dead';

const TITLES: Record<Segment, string> = { scheduled: 'Scheduled', retries: 'Retries', dead: 'Dead' };
const WHEN_LABEL: Record<Segment, string> = { scheduled: 'Runs', retries: 'Next retry', dead: 'Died' };

interface SetPage {
  total: number;
  page: number;
  count: number;
  jobs: JobJson[];
}

/** A backtrace as Sidekiq stores it: a JSON array, or (6.x and later) zlib-deflated JSON in strict base64. */
export async function backtraceLines(value: unknown): Promise<string[]> {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value !== 'string') return [];
  try {
    const bytes = Uint8Array.from(atob(value), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
    return (JSON.parse(await new Response(stream).text()) as unknown[]).map(String);
  } catch {
    return ['(backtrace could not be decoded)'];
  }
}

function details(job: JobJson): HTMLElement {
  const body = h('div', { class: 'details-body' });
  const box = h('details', {}, h('summary', {}, 'details'), body);
  box.addEventListener(
    'toggle',
    async () => {
      const lines = await backtraceLines(job.payload?.error_backtrace);
      body.replaceChildren(
        job.error_class
          ? h('p', { class: 'error' }, h('strong', {}, job.error_class), ': ', job.error_message ?? '')
          : h('span', {}),
        lines.length > 0 ? h('pre', { class: 'backtrace' }, lines.join('\n')) : h('span', {}),
        h('pre', { class: 'payload' }, job.payload ? JSON.stringify(job.payload, null, 2) : (job.raw ?? '')),
      );
    },
    { once: true },
  );
  return box;
}

function sortedSetView(segment: Segment): View {
  return async (context: ViewContext) => {
    const { api, canAct, params } = context;
    const page = pageOf(params);
    const jid = params.get('jid') ?? '';
    const className = params.get('class') ?? '';
    const data = await api.get<SetPage>(`/${segment}`, { page, count: 25, jid, class: className });
    const selected = new Set<string>();
    // Each entry is acted on through the id the server listed for it (its jid, or a `~` id of a jid no path can hold).
    const entry = (id: string) => `/${segment}/${encodeURIComponent(id)}`;
    const actions = (job: JobJson) =>
      !canAct || !job.id
        ? null
        : [
            actionButton(context, segment === 'dead' ? 'Retry now' : 'Run now', () =>
              api.post(`${entry(job.id as string)}/run`),
            ),
            segment === 'dead'
              ? null
              : actionButton(context, 'Kill', () => api.post(`${entry(job.id as string)}/kill`), { danger: true }),
            actionButton(context, 'Delete', () => api.delete(entry(job.id as string)), {
              danger: true,
              confirm: `Delete job ${job.jid}?`,
            }),
          ];
    const eachSelected = (action: (id: string) => Promise<unknown>) => async () => {
      for (const id of selected) await action(id);
    };
    const search = h(
      'form',
      {
        class: 'search',
        onsubmit: (event: Event) => {
          event.preventDefault();
          const form = new FormData(event.currentTarget as HTMLFormElement);
          const next = new URLSearchParams();
          for (const key of ['jid', 'class'])
            if (String(form.get(key) ?? '').trim()) next.set(key, String(form.get(key)).trim());
          context.navigate(`#/${segment}${next.toString() ? `?${next}` : ''}`);
        },
      },
      h('input', { name: 'jid', placeholder: 'jid', value: jid, 'aria-label': 'search by jid', size: 26 }),
      h('input', { name: 'class', placeholder: 'class', value: className, 'aria-label': 'filter by class' }),
      h('button', { class: 'btn', type: 'submit' }, 'Search'),
      jid || className ? h('a', { class: 'btn', href: `#/${segment}` }, 'Clear') : null,
    );
    const bulk = canAct
      ? h(
          'div',
          { class: 'toolbar' },
          h('span', { class: 'muted' }, 'Selected:'),
          actionButton(
            context,
            segment === 'dead' ? 'Retry selected' : 'Run selected',
            eachSelected((id) => api.post(`${entry(id)}/run`)),
          ),
          segment === 'dead'
            ? null
            : actionButton(
                context,
                'Kill selected',
                eachSelected((id) => api.post(`${entry(id)}/kill`)),
                { danger: true },
              ),
          actionButton(
            context,
            'Delete selected',
            eachSelected((id) => api.delete(entry(id))),
            { danger: true, confirm: 'Delete the selected jobs?' },
          ),
          h('span', { class: 'spacer' }),
          h('span', { class: 'muted' }, 'All:'),
          actionButton(context, segment === 'dead' ? 'Retry all' : 'Run all', () => api.post(`/${segment}/run-all`), {
            confirm: `${segment === 'dead' ? 'Retry' : 'Run'} every job in ${TITLES[segment]}?`,
          }),
          segment === 'dead'
            ? null
            : actionButton(context, 'Kill all', () => api.post(`/${segment}/kill-all`), {
                danger: true,
                confirm: `Move every job in ${TITLES[segment]} to Dead?`,
              }),
          actionButton(context, 'Delete all', () => api.delete(`/${segment}`), {
            danger: true,
            confirm: `Delete every job in ${TITLES[segment]}?`,
          }),
        )
      : null;
    const rows = data.jobs.map((job) =>
      h(
        'tr',
        {},
        canAct
          ? h(
              'td',
              {},
              h('input', {
                type: 'checkbox',
                'aria-label': `select ${job.jid}`,
                onchange: (event: Event) => {
                  const checked = (event.currentTarget as HTMLInputElement).checked;
                  if (job.id) checked ? selected.add(job.id) : selected.delete(job.id);
                },
              }),
            )
          : null,
        h('td', {}, when(job.at ?? job.score)),
        h('td', {}, jobLink(job), segment === 'scheduled' ? null : details(job)),
        h('td', {}, job.queue ?? ''),
        h('td', { class: 'args' }, job.payload ? argsText(job.payload.args) : (job.raw ?? '')),
        segment === 'scheduled'
          ? null
          : h('td', { class: 'error' }, job.error_class ? `${job.error_class}: ${job.error_message ?? ''}` : ''),
        segment === 'retries' ? h('td', { class: 'num' }, job.retry_count ?? 0) : null,
        h('td', { class: 'actions' }, actions(job)),
      ),
    );
    const headers = [
      ...(canAct ? [''] : []),
      WHEN_LABEL[segment],
      'Job',
      'Queue',
      'Arguments',
      ...(segment === 'scheduled' ? [] : ['Error']),
      ...(segment === 'retries' ? ['Retries'] : []),
      '',
    ];
    return card(
      `${TITLES[segment]} (${data.total.toLocaleString('en-US')})`,
      search,
      bulk,
      table(headers, rows, jid || className ? 'No job matches.' : 'No jobs.'),
      pager(context, data.total, data.page, data.count),
    );
  };
}

export const scheduled = sortedSetView('scheduled');
export const retries = sortedSetView('retries');
export const dead = sortedSetView('dead');
