import { h, number, when } from './dom.js';
import { card, pageOf, pager, table, View, ViewContext } from './view.js';

interface LimiterRow {
  name: string;
  kind: string;
  limits: { size: number; interval_seconds: number | null } | null;
  used: number | null;
  last_used: number | null;
}
interface LimiterPage {
  total: number;
  page: number;
  count: number;
  filter: string;
  limiters: LimiterRow[];
}

const UNITS: Array<[number, string]> = [
  [86400, 'day'],
  [3600, 'hour'],
  [60, 'minute'],
  [1, 'second'],
];

/** "5 per minute", "60 draining per hour", "at once": each kind's limit as Sidekiq Enterprise's Limits tab says it. */
function limitText(row: LimiterRow): string {
  if (!row.limits) return '—';
  const { size, interval_seconds: seconds } = row.limits;
  if (seconds === null) return `${number(size)} at once`;
  const unit = UNITS.find(([length]) => seconds === length);
  const per = unit ? unit[1] : `${number(seconds)} s`;
  const what = row.kind === 'leaky' ? 'draining per' : row.kind === 'points' ? 'points per' : 'per';
  return `${number(size)} ${what} ${per}`;
}

/** Current use against the limit, as a badge that warns from 80 % and is red when full. */
function useBadge(row: LimiterRow): HTMLElement | string {
  if (row.used === null || !row.limits) return '—';
  const share = row.used / row.limits.size;
  const tone = share >= 1 ? 'bad' : share >= 0.8 ? 'warn' : 'ok';
  return h('span', { class: `badge ${tone}` }, `${number(row.used)} / ${number(row.limits.size)}`);
}

function filterForm(context: ViewContext, filter: string): HTMLElement {
  return h(
    'form',
    {
      class: 'search',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const value = String(new FormData(event.currentTarget as HTMLFormElement).get('filter') ?? '').trim();
        // URLSearchParams encodes the value: a name part with `/`, `?` or `#` cannot split the dashboard's route.
        context.navigate(value ? `#/limits?${new URLSearchParams({ filter: value })}` : '#/limits');
      },
    },
    h('input', {
      name: 'filter',
      placeholder: 'name contains',
      value: filter,
      maxlength: 255,
      'aria-label': 'filter limiters',
    }),
    h('button', { class: 'btn', type: 'submit' }, 'Filter'),
  );
}

/** The limiter registry (Sidekiq Enterprise's Limits tab): every limiter used within its ttl, with its current use. */
export const limits: View = async (context) => {
  const filter = context.params.get('filter') ?? '';
  const data = await context.api.get<LimiterPage>('/limiters', { filter, page: pageOf(context.params), count: 50 });
  return card(
    `Limits (${number(data.total)})`,
    h('div', { class: 'toolbar' }, h('span', { class: 'spacer' }), filterForm(context, filter)),
    table(
      ['Name', 'Kind', 'Limit', 'In use', 'Last used'],
      data.limiters.map((row) =>
        h(
          'tr',
          {},
          h('td', {}, h('strong', {}, row.name)),
          h('td', {}, h('span', { class: 'badge' }, row.kind)),
          h('td', {}, limitText(row)),
          h('td', { class: 'num' }, useBadge(row)),
          h('td', {}, when(row.last_used)),
        ),
      ),
      filter
        ? 'No limiter name contains that.'
        : 'No limiter has been used yet (a limiter is listed from its first use until its ttl after the last).',
    ),
    pager(context, data.total, data.page, data.count),
  );
};
