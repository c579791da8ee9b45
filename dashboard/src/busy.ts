import { pathSegment } from './path.js';
import { argsText, h, number, when } from './dom.js';
import { jobLink } from './queues.js';
import { actionButton, card, JobJson, table, View } from './view.js';

interface ProcessRow {
  identity: string;
  hostname: string | null;
  pid: number | null;
  tag: string | null;
  labels: string[];
  queues: string[];
  concurrency: number | null;
  busy: number;
  quiet: boolean;
  stale: boolean;
  beat: number | null;
  rss: number | null;
  started_at: number | null;
  version: string | null;
  embedded: boolean;
}
interface BusyRow {
  process: string;
  tid: string;
  queue: string | null;
  run_at: number | null;
  job: JobJson;
}

function memory(kb: number | null): string {
  if (kb === null) return '—';
  return kb > 1024 * 1024 ? `${(kb / 1024 / 1024).toFixed(1)} GB` : `${Math.round(kb / 1024)} MB`;
}

export const busy: View = async (context) => {
  const { api, canAct } = context;
  const [processes, work] = await Promise.all([
    api.get<{ processes: ProcessRow[] }>('/processes', { count: 200 }),
    api.get<{ busy: BusyRow[]; total: number }>('/busy', { count: 200 }),
  ]);
  const signal = (identity: string, what: 'quiet' | 'stop') => () =>
    api.post(`/processes/${identity === 'all' ? 'all' : pathSegment(identity)}/${what}`);
  return h(
    'div',
    { class: 'stack' },
    card(
      'Processes',
      canAct && processes.processes.length > 0
        ? h(
            'div',
            { class: 'toolbar' },
            actionButton(context, 'Quiet all', signal('all', 'quiet'), {
              confirm: 'Quiet every process? They finish their jobs and fetch no more.',
            }),
            actionButton(context, 'Stop all', signal('all', 'stop'), { danger: true, confirm: 'Stop every process?' }),
          )
        : null,
      table(
        ['Process', 'Started', 'RSS', 'Threads', 'Busy', 'Queues', 'Last beat', ''],
        processes.processes.map((process) =>
          h(
            'tr',
            {},
            h(
              'td',
              {},
              h('strong', {}, `${process.hostname ?? '?'}:${process.pid ?? '?'}`),
              process.tag ? h('span', { class: 'badge' }, process.tag) : null,
              ...process.labels.map((label) => h('span', { class: 'badge' }, label)),
              process.quiet ? h('span', { class: 'badge warn' }, 'quiet') : null,
              process.stale ? h('span', { class: 'badge bad' }, 'stale') : null,
              h('div', { class: 'muted' }, process.identity),
            ),
            h('td', {}, when(process.started_at)),
            h('td', { class: 'num' }, memory(process.rss)),
            h('td', { class: 'num' }, number(process.concurrency)),
            h('td', { class: 'num' }, number(process.busy)),
            h('td', {}, process.queues.join(', ')),
            h('td', {}, when(process.beat)),
            h(
              'td',
              { class: 'actions' },
              canAct && !process.embedded
                ? [
                    process.quiet ? null : actionButton(context, 'Quiet', signal(process.identity, 'quiet')),
                    actionButton(context, 'Stop', signal(process.identity, 'stop'), {
                      danger: true,
                      confirm: `Stop ${process.identity}?`,
                    }),
                  ]
                : null,
            ),
          ),
        ),
        'No process is running.',
      ),
    ),
    card(
      `Jobs in flight (${number(work.total)})`,
      table(
        ['Process', 'TID', 'Job', 'Queue', 'Arguments', 'Started'],
        work.busy.map((row) =>
          h(
            'tr',
            {},
            h('td', {}, row.process),
            h('td', {}, row.tid),
            h('td', {}, jobLink(row.job)),
            h('td', {}, row.queue ?? ''),
            h('td', { class: 'args' }, row.job.payload ? argsText(row.job.payload.args) : ''),
            h('td', {}, when(row.run_at)),
          ),
        ),
        'Nothing is running. Jobs shorter than a heartbeat never show here, as in Sidekiq.',
      ),
    ),
  );
};
