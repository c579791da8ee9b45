import { hashSegment, pathSegment } from './path.js';
import { argsText, duration, h, number, when } from './dom.js';
import { actionButton, card, JobJson, pageOf, pager, table, View } from './view.js';

interface QueueRow {
  name: string;
  size: number;
  latency: number;
  paused: boolean;
}

interface QueuePage {
  total: number;
  page: number;
  count: number;
  /** null: every queue was read and `page` pages them; else the next scan step's cursor ("0" = the walk is done). */
  cursor: string | null;
  queues: QueueRow[];
}

/** Beyond 1,000 queues the API walks them by cursor: the page offers the next step and a way back to the start. */
function cursorNav(context: Parameters<View>[0], cursor: string): HTMLElement {
  const go = (next: string | null) => () =>
    context.navigate(next === null ? '#/queues' : `#/queues?cursor=${encodeURIComponent(next)}`);
  return h(
    'nav',
    { class: 'pager', 'aria-label': 'pages' },
    h(
      'button',
      { class: 'btn', type: 'button', disabled: !context.params.has('cursor'), onclick: go(null) },
      '« First',
    ),
    h('button', { class: 'btn', type: 'button', disabled: cursor === '0', onclick: go(cursor) }, 'Next ›'),
  );
}

export const queues: View = async (context) => {
  const { api, canAct, params } = context;
  const cursor = params.get('cursor') ?? undefined;
  const data = await api.get<QueuePage>(
    '/queues',
    cursor === undefined ? { page: pageOf(params), count: 50 } : { cursor, count: 50 },
  );
  const rows = data.queues;
  return card(
    `Queues (${data.total.toLocaleString('en-US')})`,
    table(
      ['Queue', 'Size', 'Latency', 'State', ''],
      rows.map((queue) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: `#/queues/${hashSegment(queue.name)}` }, queue.name)),
          h('td', { class: 'num' }, number(queue.size)),
          h('td', { class: 'num' }, duration(queue.latency)),
          h(
            'td',
            {},
            queue.paused ? h('span', { class: 'badge warn' }, 'paused') : h('span', { class: 'badge ok' }, 'active'),
          ),
          h('td', { class: 'actions' }, canAct ? pauseButton(context, queue.name, queue.paused) : null),
        ),
      ),
      'No queues yet: a queue appears when a job is pushed to it.',
    ),
    data.cursor === null ? pager(context, data.total, data.page, data.count) : cursorNav(context, data.cursor),
  );
};

function pauseButton(context: Parameters<View>[0], name: string, paused: boolean): HTMLButtonElement {
  const path = `/queues/${pathSegment(name)}/${paused ? 'unpause' : 'pause'}`;
  return actionButton(context, paused ? 'Resume' : 'Pause', () => context.api.post(path));
}

export const queue: View = async (context) => {
  const { api, canAct, params } = context;
  const name = context.path[1] ?? '';
  const page = pageOf(params);
  const queuePath = `/queues/${pathSegment(name)}`;
  const data = await api.get<QueueRow & { total: number; page: number; count: number; jobs: JobJson[] }>(queuePath, {
    page,
    count: 25,
  });
  return card(
    `Queue ${name}`,
    h(
      'div',
      { class: 'toolbar' },
      h('span', {}, `${number(data.size)} jobs, latency ${duration(data.latency)}`),
      data.paused ? h('span', { class: 'badge warn' }, 'paused') : null,
      canAct ? pauseButton(context, name, data.paused) : null,
      canAct && data.size > 0
        ? actionButton(context, 'Clear queue', () => api.delete(queuePath), {
            danger: true,
            confirm: `Delete all ${number(data.size)} jobs of queue ${name}? This cannot be undone.`,
          })
        : null,
    ),
    table(
      ['Job', 'Arguments', 'Enqueued', ...(canAct ? [''] : [])],
      data.jobs.map((job) =>
        h(
          'tr',
          {},
          h('td', {}, jobLink(job)),
          h('td', { class: 'args' }, job.payload ? argsText(job.payload.args) : (job.raw ?? '')),
          h('td', {}, when(job.enqueued_at)),
          canAct
            ? h(
                'td',
                { class: 'actions' },
                job.jid
                  ? actionButton(
                      context,
                      'Delete',
                      () => api.delete(`${queuePath}/jobs/${pathSegment(job.jid as string)}`),
                      { danger: true, confirm: `Delete job ${job.jid} from ${name}?` },
                    )
                  : null,
              )
            : null,
        ),
      ),
      'This queue is empty.',
    ),
    pager(context, data.total, data.page, data.count),
  );
};

export function jobLink(job: JobJson): HTMLElement {
  return h(
    'div',
    { class: 'job' },
    h('strong', {}, job.class ?? '(unreadable)'),
    job.jid
      ? h(
          'a',
          { class: 'jid', href: `#/jobs/${hashSegment(job.jid)}`, title: 'where this job is, its payload and status' },
          job.jid,
        )
      : null,
    job.parse_error ? h('span', { class: 'badge bad' }, `malformed: ${job.parse_error}`) : null,
  );
}
