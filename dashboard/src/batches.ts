import { hashSegment, pathSegment } from './path.js';
import { h, number, when } from './dom.js';
import { actionButton, card, pageOf, pager, table, View, ViewContext } from './view.js';

/** A batch as `GET /v1/batches` lists it. */
interface BatchRow {
  bid: string;
  description: string | null;
  created_at: number | null;
  parent_bid: string | null;
  tags: string[];
  total: number;
  pending: number;
  failures: number;
  complete: boolean;
  success: boolean;
  death: boolean;
  complete_at: number | null;
  success_at: number | null;
  death_at: number | null;
}

interface BatchPage {
  total: number;
  page: number;
  count: number;
  tag: string | null;
  /** True when the page lists the dead batches (`dead-batches`), latest death first. */
  dead?: boolean;
  /** null: read by page; else the next step of a walk of the tag's index ("0" = done). */
  cursor: string | null;
  batches: BatchRow[];
}

interface Callback {
  event: string;
  target: string;
  options: unknown;
  fired: boolean;
  fired_at: number | null;
}

/** One batch (`GET /v1/batches/:bid`); `children` / `child_count` appear when the API reports nested batches. */
interface BatchJson extends BatchRow {
  callback_queue: string | null;
  jids: string[];
  dead_jids: string[];
  failed_jids: string[];
  failure_info: Array<{ jid: string; error_class: string; error_message: string }>;
  callbacks: Callback[];
  expires_in: number | null;
  children?: Array<string | { bid: string }>;
  child_count?: number;
}

/** Live jids listed on a batch's page; the rest are counted. */
const SHOWN_JIDS = 100;
/** A batch's page with more pending jids than this does not poll. */
const POLL_JIDS = 1000;

/** Jobs settled (succeeded) out of those added, as Sidekiq Pro's progress bar counts them. */
function progress(batch: BatchRow, wide = false): HTMLElement {
  const done = Math.max(0, batch.total - batch.pending);
  const percent = batch.total > 0 ? Math.min(100, Math.floor((done * 100) / batch.total)) : 0;
  const label = `${number(done)} / ${number(batch.total)} (${percent}%)`;
  const bar = (...children: HTMLElement[]) =>
    h(
      'div',
      { class: `progress${wide ? '' : ' slim'}`, role: 'progressbar', 'aria-valuenow': percent, 'aria-label': label },
      h('div', { class: `bar w${Math.floor(percent / 5) * 5}` }),
      ...children,
    );
  // In a list row the count sits beside a thin bar, readable over neither colour.
  return wide ? bar(h('span', {}, label)) : h('div', { class: 'progress-cell' }, bar(), h('span', {}, label));
}

function states(batch: BatchRow): HTMLElement[] {
  const badges: HTMLElement[] = [];
  if (batch.success) badges.push(h('span', { class: 'badge ok' }, 'success'));
  else if (batch.complete) badges.push(h('span', { class: 'badge warn' }, 'complete'));
  if (batch.death) badges.push(h('span', { class: 'badge bad' }, 'death'));
  if (badges.length === 0) badges.push(h('span', { class: 'badge' }, 'running'));
  return badges;
}

/** The list filtered by a tag: the value goes in the query, encoded, so no tag can split or leave the route. */
function tagHref(tag: string): string {
  return `#/batches?${new URLSearchParams({ tag })}`;
}

function tagLinks(tags: string[]): HTMLElement[] {
  return tags.map((tag) => h('a', { class: 'badge tag', href: tagHref(tag) }, tag));
}

function batchHref(bid: string): string {
  return `#/batches/${hashSegment(bid)}`;
}

function jidLink(jid: string): HTMLElement {
  return h('a', { class: 'jid', href: `#/jobs/${hashSegment(jid)}` }, jid);
}

function tagForm(context: ViewContext, tag: string): HTMLElement {
  return h(
    'form',
    {
      class: 'search',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const value = String(new FormData(event.currentTarget as HTMLFormElement).get('tag') ?? '').trim();
        context.navigate(value ? tagHref(value) : '#/batches');
      },
    },
    h('input', { name: 'tag', placeholder: 'tag', value: tag, maxlength: 255, 'aria-label': 'filter by tag' }),
    h('button', { class: 'btn', type: 'submit' }, 'Filter'),
    tag ? h('a', { class: 'btn', href: '#/batches' }, 'Clear') : null,
  );
}

/** A tag of more than 1,000 batches is walked by the API's cursor: the next step, and a way back to the start. */
function cursorNav(context: ViewContext, tag: string, cursor: string): HTMLElement {
  const go = (next: string | null) => () => {
    const params = new URLSearchParams({ tag });
    if (next !== null) params.set('cursor', next);
    context.navigate(`#/batches?${params}`);
  };
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

/** All batches, or the dead ones only (Sidekiq Pro's `Batch::DeadSet`). */
function deadToggle(dead: boolean): HTMLElement {
  const link = (label: string, href: string, current: boolean) =>
    h('a', { class: current ? 'btn primary' : 'btn', href, 'aria-current': current ? 'true' : undefined }, label);
  return h(
    'nav',
    { class: 'periods', 'aria-label': 'which batches' },
    link('All', '#/batches', !dead),
    link('Dead', '#/batches?dead=true', dead),
  );
}

function listRow(batch: BatchRow, dead: boolean): HTMLElement {
  return h(
    'tr',
    {},
    h(
      'td',
      {},
      h('a', { class: 'bid', href: batchHref(batch.bid) }, batch.description || batch.bid),
      batch.description ? h('div', { class: 'muted' }, batch.bid) : null,
    ),
    h('td', {}, when(dead ? batch.death_at : batch.created_at)),
    h('td', { class: 'wide' }, progress(batch)),
    h('td', { class: 'num' }, number(batch.pending)),
    h('td', { class: 'num' }, number(batch.failures)),
    h('td', {}, states(batch)),
    h('td', {}, tagLinks(batch.tags)),
  );
}

/**
 * Sidekiq Pro's Batches tab: newest first, the dead ones (latest death first), or the batches of one tag, each with
 * its progress and counters.
 */
async function batchList(context: ViewContext): Promise<Node> {
  const tag = context.params.get('tag') ?? '';
  const dead = !tag && context.params.get('dead') === 'true';
  const cursor = context.params.get('cursor') ?? undefined;
  const data = await context.api.get<BatchPage>(
    '/batches',
    cursor === undefined || !tag
      ? { tag, page: pageOf(context.params), count: 25, ...(dead ? { dead: 'true' } : {}) }
      : { tag, cursor, count: 25 },
  );
  return card(
    `${tag ? 'Batches tagged' : dead ? 'Dead batches' : 'Batches'}${tag ? ` ${tag}` : ''} (${number(data.total)})`,
    h('div', { class: 'toolbar' }, deadToggle(dead), h('span', { class: 'spacer' }), tagForm(context, tag)),
    table(
      ['Batch', dead ? 'Died' : 'Created', 'Progress', 'Pending', 'Failures', 'State', 'Tags'],
      data.batches.map((batch) => listRow(batch, dead)),
      tag
        ? 'No batch has this tag.'
        : dead
          ? 'No dead batches: a batch is listed here while a job of it, or of a batch under it, is dead.'
          : 'No batches: a batch is listed from its first jobs block until it expires (30 days, or a day after success).',
    ),
    data.cursor === null ? pager(context, data.total, data.page, data.count) : cursorNav(context, tag, data.cursor),
  );
}

function tile(label: string, value: number, tone = ''): HTMLElement {
  return h(
    'div',
    { class: `tile ${tone}` },
    h('span', { class: 'tile-value' }, number(value)),
    h('span', { class: 'tile-label' }, label),
  );
}

function fact(label: string, value: Node | string | Array<Node | string>): HTMLElement {
  return h('tr', {}, h('th', {}, label), h('td', {}, value));
}

function callbacksCard(batch: BatchJson): HTMLElement {
  return card(
    'Callbacks',
    table(
      ['Event', 'Target', 'Options', 'Fired'],
      batch.callbacks.map((callback) =>
        h(
          'tr',
          {},
          h('td', {}, h('span', { class: 'badge' }, callback.event)),
          h('td', {}, h('strong', {}, callback.target)),
          h('td', { class: 'args' }, JSON.stringify(callback.options) ?? ''),
          h(
            'td',
            {},
            callback.fired
              ? [h('span', { class: 'badge ok' }, 'fired'), ' ', when(callback.fired_at)]
              : h('span', { class: 'badge' }, 'not yet'),
          ),
        ),
      ),
      'No callbacks.',
    ),
  );
}

/** Jobs with their last error, each linked to its own page. */
function jobsCard(title: string, jids: string[], errors: Map<string, string>, empty: string): HTMLElement {
  return card(
    `${title} (${number(jids.length)})`,
    table(
      ['Job', 'Last error'],
      jids.map((jid) => h('tr', {}, h('td', {}, jidLink(jid)), h('td', { class: 'error' }, errors.get(jid) ?? ''))),
      empty,
    ),
  );
}

function childrenCard(batch: BatchJson): HTMLElement | null {
  const children = (batch.children ?? []).map((child) => (typeof child === 'string' ? child : child.bid));
  if (children.length === 0 && !batch.child_count) return null;
  return card(
    `Child batches (${number(Math.max(children.length, batch.child_count ?? 0))})`,
    children.length === 0
      ? h('p', { class: 'muted' }, 'Their bids are not listed.')
      : h(
          'ul',
          { class: 'plain' },
          ...children.map((bid) => h('li', {}, h('a', { class: 'bid', href: batchHref(bid) }, bid))),
        ),
  );
}

/** One batch: its progress, counters and events, its callbacks, and its failing, dead and pending jobs. */
async function batchPage(context: ViewContext, bid: string): Promise<Node> {
  const batch = await context.api.get<BatchJson>(`/batches/${pathSegment(bid)}`);
  const errors = new Map(
    batch.failure_info.map((failure) => [
      failure.jid,
      [failure.error_class, failure.error_message].filter(Boolean).join(': '),
    ]),
  );
  const dead = new Set(batch.dead_jids);
  const failing = [...new Set([...batch.failed_jids, ...batch.failure_info.map((failure) => failure.jid)])]
    .filter((jid) => !dead.has(jid))
    .sort();
  const remove = context.canAct
    ? actionButton(
        context,
        'Delete',
        async () => {
          await context.api.delete(`/batches/${pathSegment(batch.bid)}`);
          context.navigate('#/batches');
        },
        {
          danger: true,
          confirm: `Delete batch ${batch.bid}? Its keys go; its jobs stay where they are and run without it, and no callback fires.`,
        },
      )
    : null;
  const live = batch.jids.slice(0, SHOWN_JIDS);
  return h(
    'div',
    // Each read carries every pending jid: past POLL_JIDS of them the page is read once, not every few seconds.
    { class: 'stack', 'data-no-poll': batch.jids.length > POLL_JIDS },
    card(
      `Batch ${batch.bid}`,
      h('div', { class: 'toolbar' }, ...states(batch), h('span', { class: 'spacer' }), remove),
      batch.description ? h('p', { class: 'description' }, batch.description) : null,
      progress(batch, true),
      h(
        'div',
        { class: 'tiles counters' },
        tile('Total', batch.total),
        tile('Pending', batch.pending),
        tile('Failures', batch.failures, batch.failures > 0 ? 'warn' : ''),
        tile('Dead', batch.dead_jids.length, batch.dead_jids.length > 0 ? 'bad' : ''),
      ),
      h(
        'table',
        { class: 'facts' },
        h(
          'tbody',
          {},
          fact('Created', when(batch.created_at)),
          fact('Complete', when(batch.complete_at)),
          fact('Succeeded', when(batch.success_at)),
          fact('Died', when(batch.death_at)),
          fact('Callback queue', batch.callback_queue ?? '—'),
          fact(
            'Parent',
            batch.parent_bid ? h('a', { class: 'bid', href: batchHref(batch.parent_bid) }, batch.parent_bid) : '—',
          ),
          fact('Tags', batch.tags.length > 0 ? tagLinks(batch.tags) : '—'),
          fact('Expires', batch.expires_in === null ? '—' : when(Date.now() / 1000 + batch.expires_in)),
        ),
      ),
    ),
    childrenCard(batch),
    callbacksCard(batch),
    jobsCard('Failing jobs', failing, errors, 'No job of this batch is failing now.'),
    jobsCard('Dead jobs', batch.dead_jids, errors, 'No job of this batch died.'),
    card(
      `Pending jobs (${number(batch.jids.length)})`,
      live.length === 0
        ? h('p', { class: 'empty' }, 'No job of this batch is still to run.')
        : h('ul', { class: 'plain jids' }, ...live.map((jid) => h('li', {}, jidLink(jid)))),
      batch.jids.length > live.length
        ? h('p', { class: 'muted' }, `and ${number(batch.jids.length - live.length)} more`)
        : null,
    ),
  );
}

/** `#/batches` lists them, `#/batches/<bid>` shows one. */
export const batches: View = (context) => (context.path[1] ? batchPage(context, context.path[1]) : batchList(context));
