import { hashSegment } from './path.js';
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

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag: string, attributes: Record<string, string | number>): SVGElement {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  return element;
}

/** Processed and failed per day as two lines, drawn in SVG (no chart library, nothing inline for the CSP). */
function historyChart(days: HistoryDay[]): Node {
  if (days.length === 0) return h('p', { class: 'empty' }, 'No history yet.');
  const ordered = [...days].reverse();
  const width = 720;
  const height = 180;
  const pad = 28;
  const max = Math.max(1, ...ordered.map((day) => Math.max(day.processed, day.failed)));
  const x = (index: number) => pad + (index * (width - 2 * pad)) / Math.max(1, ordered.length - 1);
  const y = (value: number) => height - pad - (value * (height - 2 * pad)) / max;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'aria-label': 'processed and failed per day' });
  for (let tick = 0; tick <= 4; tick++) {
    const value = (max * tick) / 4;
    chart.appendChild(svg('line', { x1: pad, x2: width - pad, y1: y(value), y2: y(value), class: 'grid' }));
    const label = svg('text', { x: 2, y: y(value) + 4, class: 'axis' });
    label.textContent = value >= 1000 ? `${Math.round(value / 100) / 10}k` : String(Math.round(value));
    chart.appendChild(label);
  }
  for (const [key, cls] of [['processed', 'line processed'], ['failed', 'line failed']] as const) {
    const points = ordered.map((day, index) => `${x(index)},${y(day[key])}`).join(' ');
    chart.appendChild(svg('polyline', { points, class: cls }));
  }
  ordered.forEach((day, index) => {
    if (ordered.length > 10 && index % Math.ceil(ordered.length / 7) !== 0) return;
    const label = svg('text', { x: x(index), y: height - 6, class: 'axis', 'text-anchor': 'middle' });
    label.textContent = day.date.slice(5);
    chart.appendChild(label);
  });
  return h('figure', {}, chart, h('figcaption', {}, h('span', { class: 'key processed' }, 'processed'), h('span', { class: 'key failed' }, 'failed')));
}

export const overview: View = async ({ api }) => {
  const [stats, queues, history, processes] = await Promise.all([
    api.get<Stats>('/stats'),
    api.get<{ queues: QueueRow[] }>('/queues'),
    api.get<{ days: HistoryDay[] }>('/stats/history', { days: 30 }).catch(() => ({ days: [] })),
    api.get<{ processes: ProcessRow[] }>('/processes', { count: 50 }),
  ]);
  const tile = (label: string, value: number, href: string, tone = '') =>
    h('a', { class: `tile ${tone}`, href }, h('span', { class: 'tile-value' }, number(value)), h('span', { class: 'tile-label' }, label));
  return h(
    'div',
    { class: 'stack' },
    h(
      'div',
      { class: 'tiles' },
      tile('Processed', stats.processed, '#/overview'),
      tile('Failed', stats.failed, '#/overview', stats.failed > 0 ? 'warn' : ''),
      tile('Busy', stats.busy, '#/busy'),
      tile('Enqueued', stats.enqueued, '#/queues'),
      tile('Scheduled', stats.scheduled, '#/scheduled'),
      tile('Retries', stats.retries, '#/retries', stats.retries > 0 ? 'warn' : ''),
      tile('Dead', stats.dead, '#/dead', stats.dead > 0 ? 'bad' : ''),
      tile('Processes', stats.processes, '#/busy'),
    ),
    card('History (30 days)', historyChart(history.days)),
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
              h('td', {}, process.stale ? h('span', { class: 'badge bad' }, 'stale') : process.quiet ? h('span', { class: 'badge warn' }, 'quiet') : ''),
            ),
          ),
          'No process is running.',
        ),
      ),
    ),
  );
};
