import { hashSegment, pathSegment } from './path.js';
import { barChart, lineChart, Series } from './chart.js';
import { h, number } from './dom.js';
import { card, table, View, ViewContext } from './view.js';

interface ClassMetrics {
  class: string;
  processed: number;
  failed: number;
  total_ms: number;
  avg_ms: number;
  series: { processed: number[]; failed: number[]; ms: number[] };
}
interface MetricsWindow {
  period: string;
  periods: string[];
  bucket_seconds: number;
  buckets: string[];
  starts_at: string;
  ends_at: string;
}
interface TopJobs extends MetricsWindow {
  jobs: ClassMetrics[];
}
interface JobMetrics extends MetricsWindow {
  job: ClassMetrics;
  histogram: { labels: string[]; counts: number[] } | null;
}

/** Lines drawn for the busiest classes; the table lists them all. */
const CHARTED = 5;

/** A run time with its unit: ms under a second (most jobs), seconds above, as many digits as say something. */
function time(ms: number): string {
  if (ms < 1000) return `${Number(ms.toPrecision(3)).toLocaleString('en-US')} ms`;
  return `${(ms / 1000).toLocaleString('en-US', { maximumFractionDigits: ms < 60_000 ? 2 : 0 })} s`;
}

/** Bucket starts as UTC clock times (Sidekiq's metrics are UTC only); days shown past 24 hours. */
function bucketLabels(window: MetricsWindow): string[] {
  const withDay = window.buckets.length * window.bucket_seconds > 86400;
  return window.buckets.map((iso) => (withDay ? `${iso.slice(8, 10)} ${iso.slice(11, 16)}` : iso.slice(11, 16)));
}

function periodPicker(context: ViewContext, base: string, window: MetricsWindow, extra: URLSearchParams): HTMLElement {
  return h(
    'nav',
    { class: 'periods', 'aria-label': 'period' },
    ...window.periods.map((period) => {
      const params = new URLSearchParams(extra);
      params.set('period', period);
      return h(
        'a',
        {
          class: period === window.period ? 'btn primary' : 'btn',
          href: `${base}?${params}`,
          'aria-current': period === window.period ? 'true' : undefined,
        },
        period,
      );
    }),
  );
}

function windowText(data: MetricsWindow): HTMLElement {
  return h(
    'p',
    { class: 'muted' },
    `${data.starts_at.slice(0, 16).replace('T', ' ')} to ${data.ends_at.slice(0, 16).replace('T', ' ')} UTC, ${data.bucket_seconds / 60}-minute buckets`,
  );
}

export const metrics: View = async (context) => {
  const className = context.path[1];
  return className ? classMetrics(context, className) : topJobs(context);
};

async function topJobs(context: ViewContext): Promise<Node> {
  const substr = context.params.get('substr') ?? '';
  const data = await context.api.get<TopJobs>('/metrics/jobs', {
    period: context.params.get('period') ?? undefined,
    substr,
  });
  const keep = new URLSearchParams(substr ? { substr } : {});
  const filter = h(
    'form',
    {
      class: 'search',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const value = String(new FormData(event.currentTarget as HTMLFormElement).get('substr') ?? '').trim();
        const params = new URLSearchParams({ period: data.period });
        if (value) params.set('substr', value);
        context.navigate(`#/metrics?${params}`);
      },
    },
    h('input', { name: 'substr', placeholder: 'class name contains', value: substr, 'aria-label': 'filter classes' }),
    h('button', { class: 'btn', type: 'submit' }, 'Filter'),
  );
  const charted: Series[] = data.jobs
    .slice(0, CHARTED)
    .map((job, index) => ({ label: job.class, tone: `s${index + 1}`, values: job.series.ms.map((ms) => ms / 1000) }));
  return h(
    'div',
    { class: 'stack' },
    card(
      'Metrics',
      h(
        'div',
        { class: 'toolbar' },
        periodPicker(context, '#/metrics', data, keep),
        h('span', { class: 'spacer' }),
        filter,
      ),
      windowText(data),
      data.jobs.length === 0
        ? h('p', { class: 'empty' }, 'No job ran in this period.')
        : h(
            'div',
            {},
            h('h3', {}, 'Execution time (s) per bucket, busiest classes'),
            lineChart('execution time per bucket of the busiest classes', bucketLabels(data), charted),
          ),
    ),
    card(
      `Job classes (${data.jobs.length})`,
      table(
        ['Class', 'Success', 'Failure', 'Total time', 'Average'],
        data.jobs.map((job) =>
          h(
            'tr',
            {},
            h(
              'td',
              {},
              h(
                'a',
                { href: `#/metrics/${hashSegment(job.class)}?period=${encodeURIComponent(data.period)}` },
                job.class,
              ),
            ),
            h('td', { class: 'num' }, number(job.processed - job.failed)),
            h('td', { class: 'num' }, number(job.failed)),
            h('td', { class: 'num' }, time(job.total_ms)),
            h('td', { class: 'num' }, time(job.avg_ms)),
          ),
        ),
        substr ? 'No class matches.' : 'No job ran in this period.',
      ),
    ),
  );
}

async function classMetrics(context: ViewContext, className: string): Promise<Node> {
  const data = await context.api.get<JobMetrics>(`/metrics/jobs/${pathSegment(className)}`, {
    period: context.params.get('period') ?? undefined,
  });
  const { job } = data;
  const labels = bucketLabels(data);
  const average = job.series.ms.map((ms, index) => {
    const completed = job.series.processed[index] - job.series.failed[index];
    return completed > 0 ? ms / completed : 0;
  });
  const fact = (label: string, value: string) =>
    h('div', { class: 'tile' }, h('span', { class: 'tile-value' }, value), h('span', { class: 'tile-label' }, label));
  return h(
    'div',
    { class: 'stack' },
    card(
      `Metrics: ${className}`,
      h(
        'div',
        { class: 'toolbar' },
        h('a', { class: 'btn ghost', href: `#/metrics?period=${encodeURIComponent(data.period)}` }, '‹ All classes'),
        periodPicker(context, `#/metrics/${hashSegment(className)}`, data, new URLSearchParams()),
      ),
      windowText(data),
      h(
        'div',
        { class: 'tiles' },
        fact('Success', number(job.processed - job.failed)),
        fact('Failure', number(job.failed)),
        fact('Total time', time(job.total_ms)),
        fact('Average', time(job.avg_ms)),
      ),
    ),
    h(
      'div',
      { class: 'columns' },
      card(
        'Runs per bucket',
        lineChart('runs and failures per bucket', labels, [
          { label: 'processed', tone: 'processed', values: job.series.processed },
          { label: 'failed', tone: 'failed', values: job.series.failed },
        ]),
      ),
      card(
        'Average time per bucket (ms)',
        lineChart('average execution time per bucket', labels, [{ label: 'average ms', tone: 's1', values: average }]),
      ),
    ),
    card(
      'Execution time histogram',
      data.histogram
        ? h(
            'div',
            { id: 'histogram' },
            barChart('runs per execution time bucket', data.histogram.labels, data.histogram.counts),
            h(
              'p',
              { class: 'muted' },
              'Successful runs by how long they took, over the period (Sidekiq keeps histograms 8 hours).',
            ),
          )
        : h('p', { class: 'empty' }, 'Histograms are kept 8 hours: pick a period of 8 hours or less.'),
    ),
  );
}
