import { hashSegment } from './path.js';
import { lineChart } from './chart.js';
import { duration, h, number, when } from './dom.js';
import { card, table, View } from './view.js';

interface Stats {
  processed: number;
  failed: number;
  busy: number;
  processes: number;
  enqueued: number;
  scheduled: number;
  retries: number;
  dead: number;
  default_latency: number;
}
interface QueueRow {
  name: string;
  size: number;
  latency: number;
  paused: boolean;
}
interface HistoryDay {
  date: string;
  processed: number;
  failed: number;
}
interface ProcessRow {
  identity: string;
  hostname: string | null;
  busy: number;
  concurrency: number | null;
  quiet: boolean;
  stale: boolean;
  beat: number | null;
  rss: number | null;
}

/** Stats read at each render of the overview, newest last: the live graph plots the change between two. */
interface Sample {
  at: number;
  processed: number;
  failed: number;
}
const LIVE_POINTS = 60;
const samples: Sample[] = [];

function takeSample(stats: Stats): void {
  const last = samples[samples.length - 1];
  // A counter that went down (stats reset, another Redis) starts the graph over.
  if (last && (stats.processed < last.processed || stats.failed < last.failed)) samples.length = 0;
  samples.push({ at: Date.now(), processed: stats.processed, failed: stats.failed });
  if (samples.length > LIVE_POINTS + 1) samples.splice(0, samples.length - LIVE_POINTS - 1);
}

/** Jobs processed and failed between consecutive reads (Sidekiq's dashboard "real-time" graph). */
function liveChart(): Node {
  if (samples.length < 2) return h('p', { class: 'empty' }, 'Collecting: the graph starts at the next live poll.');
  const deltas = samples.slice(1).map((sample, index) => ({
    at: sample.at,
    processed: sample.processed - samples[index].processed,
    failed: sample.failed - samples[index].failed,
  }));
  const labels = deltas.map((delta) => new Date(delta.at).toLocaleTimeString('en-GB', { hour12: false }));
  return lineChart('jobs processed and failed per poll', labels, [
    { label: 'processed', tone: 'processed', values: deltas.map((delta) => delta.processed) },
    { label: 'failed', tone: 'failed', values: deltas.map((delta) => delta.failed) },
  ]);
}

/** Processed and failed per day, oldest first. */
function historyChart(days: HistoryDay[]): Node {
  if (days.length === 0) return h('p', { class: 'empty' }, 'No history yet.');
  const ordered = [...days].reverse();
  return lineChart(
    'processed and failed per day',
    ordered.map((day) => day.date.slice(5)),
    [
      { label: 'processed', tone: 'processed', values: ordered.map((day) => day.processed) },
      { label: 'failed', tone: 'failed', values: ordered.map((day) => day.failed) },
    ],
  );
}

export const overview: View = async ({ api }) => {
  const [stats, queues, history, processes] = await Promise.all([
    api.get<Stats>('/stats'),
    api.get<{ queues: QueueRow[] }>('/queues'),
    api.get<{ days: HistoryDay[] }>('/stats/history', { days: 30 }).catch(() => ({ days: [] })),
    api.get<{ processes: ProcessRow[] }>('/processes', { count: 50 }),
  ]);
  takeSample(stats);
  const tile = (label: string, value: number, href: string, tone = '') =>
    h(
      'a',
      { class: `tile ${tone}`, href },
      h('span', { class: 'tile-value' }, number(value)),
      h('span', { class: 'tile-label' }, label),
    );
  return h(
    'div',
    { class: 'stack' },
    h(
      'div',
      { class: 'tiles' },
      tile('Processed', stats.processed, '#/metrics'),
      tile('Failed', stats.failed, '#/metrics', stats.failed > 0 ? 'warn' : ''),
      tile('Busy', stats.busy, '#/busy'),
      tile('Enqueued', stats.enqueued, '#/queues'),
      tile('Scheduled', stats.scheduled, '#/scheduled'),
      tile('Retries', stats.retries, '#/retries', stats.retries > 0 ? 'warn' : ''),
      tile('Dead', stats.dead, '#/dead', stats.dead > 0 ? 'bad' : ''),
      tile('Processes', stats.processes, '#/busy'),
    ),
    h('div', { class: 'columns' }, card('Live', liveChart()), card('History (30 days)', historyChart(history.days))),
    h(
      'div',
      { class: 'columns' },
      card(
        'Queues',
        table(
          ['Queue', 'Size', 'Latency', ''],
          queues.queues.map((queue) =>
            h(
              'tr',
              {},
              h('td', {}, h('a', { href: `#/queues/${hashSegment(queue.name)}` }, queue.name)),
              h('td', { class: 'num' }, number(queue.size)),
              h('td', { class: 'num' }, duration(queue.latency)),
              h('td', {}, queue.paused ? h('span', { class: 'badge warn' }, 'paused') : ''),
            ),
          ),
          'No queues yet.',
        ),
      ),
      card(
        'Processes',
        table(
          ['Process', 'Busy', 'Last beat', ''],
          processes.processes.map((process) =>
            h(
              'tr',
              {},
              h('td', {}, process.identity),
              h('td', { class: 'num' }, `${process.busy} / ${process.concurrency ?? '?'}`),
              h('td', {}, when(process.beat)),
              h(
                'td',
                {},
                process.stale
                  ? h('span', { class: 'badge bad' }, 'stale')
                  : process.quiet
                    ? h('span', { class: 'badge warn' }, 'quiet')
                    : '',
              ),
            ),
          ),
          'No process is running.',
        ),
      ),
    ),
  );
};
