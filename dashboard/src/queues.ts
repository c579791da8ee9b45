import { argsText, duration, h, number, when } from './dom.js';
import { actionButton, card, JobJson, pageOf, pager, table, View } from './view.js';

interface QueueRow {
  name: string;
  size: number;
  latency: number;
  paused: boolean;
}

export const queues: View = async (context) => {
  const { api, canAct } = context;
  const { queues: rows } = await api.get<{ queues: QueueRow[] }>('/queues');
  return card(
    'Queues',
    table(
      ['Queue', 'Size', 'Latency', 'State', ''],
      rows.map((queue) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: `#/queues/${encodeURIComponent(queue.name)}` }, queue.name)),
          h('td', { class: 'num' }, number(queue.size)),
          h('td', { class: 'num' }, duration(queue.latency)),
          h('td', {}, queue.paused ? h('span', { class: 'badge warn' }, 'paused') : h('span', { class: 'badge ok' }, 'active')),
          h('td', { class: 'actions' }, canAct ? pauseButton(context, queue.name, queue.paused) : null),
        ),
      ),
      'No queues yet: a queue appears when a job is pushed to it.',
    ),
  );
};

function pauseButton(context: Parameters<View>[0], name: string, paused: boolean): HTMLButtonElement {
  const path = `/queues/${encodeURIComponent(name)}/${paused ? 'unpause' : 'pause'}`;
  return actionButton(context, paused ? 'Resume' : 'Pause', () => context.api.post(path));
}

export const queue: View = async (context) => {
  const { api, canAct, params } = context;
  const name = context.path[1] ?? '';
  const page = pageOf(params);
  const queuePath = `/queues/${encodeURIComponent(name)}`;
  const data = await api.get<QueueRow & { total: number; page: number; count: number; jobs: JobJson[] }>(queuePath, { page, count: 25 });
  return card(
    `Queue ${name}`,
    h(
      'div',
      { class: 'toolbar' },
      h('span', {}, `${number(data.size)} jobs, latency ${duration(data.latency)}`),
      data.paused ? h('span', { class: 'badge warn' }, 'paused') : null,
      canAct ? pauseButton(context, name, data.paused) : null,
      canAct && data.size > 0
        ? actionButton(context, 'Clear queue', () => api.delete(queuePath), { danger: true, confirm: `Delete all ${number(data.size)} jobs of queue ${name}? This cannot be undone.` })
        : null,
    ),
    table(
      ['Job', 'Arguments', 'Enqueued', ...(canAct ? [''] : [])],
      data.jobs.map((job) =>
        h(
          'tr',
          {},
          h('td', {}, jobLink(job)),
          h('td', { class: 'args' }, job.payload ? argsText(job.payload.args) : job.raw ?? ''),
          h('td', {}, when(job.enqueued_at)),
          canAct
            ? h(
                'td',
                { class: 'actions' },
                job.jid ? actionButton(context, 'Delete', () => api.delete(`${queuePath}/jobs/${encodeURIComponent(job.jid as string)}`), { danger: true, confirm: `Delete job ${job.jid} from ${name}?` }) : null,
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
    job.jid ? h('a', { class: 'jid', href: `#/jobs/${encodeURIComponent(job.jid)}`, title: 'where this job is, its payload and status' }, job.jid) : null,
    job.parse_error ? h('span', { class: 'badge bad' }, `malformed: ${job.parse_error}`) : null,
  );
}
