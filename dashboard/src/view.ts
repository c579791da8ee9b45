import type { Api } from './api.js';
import { h } from './dom.js';

/** What every page gets: the API, whether the token may act, and a way to redraw after an action. */
export interface ViewContext {
  api: Api;
  canAct: boolean;
  params: URLSearchParams;
  path: string[];
  refresh(): void;
  navigate(hash: string): void;
  notify(message: string, kind?: 'ok' | 'error'): void;
}

export type View = (context: ViewContext) => Promise<Node>;

export interface JobJson {
  jid: string | null;
  class: string | null;
  queue: string | null;
  enqueued_at: number | null;
  created_at: number | null;
  retry_count: number | null;
  error_class: string | null;
  error_message: string | null;
  payload: Record<string, unknown> | null;
  parse_error?: string;
  raw?: string;
  score?: number;
  at?: number;
  /** A sorted-set entry's name in its routes (the jid, or `~` + base64url of a jid no URL path can hold). */
  id?: string | null;
}

export function card(title: string, ...body: Array<Node | string | null>): HTMLElement {
  return h('section', { class: 'card' }, h('h2', {}, title), ...body);
}

export function table(headers: string[], rows: Node[], empty = 'Nothing here.'): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  return h(
    'div',
    { class: 'table-wrap' },
    h('table', {}, h('thead', {}, h('tr', {}, ...headers.map((text) => h('th', {}, text)))), h('tbody', {}, ...rows)),
  );
}

/** A button that runs an API action, confirms destructive ones, then redraws the page. */
export function actionButton(
  context: ViewContext,
  label: string,
  run: () => Promise<unknown>,
  options: { danger?: boolean; confirm?: string } = {},
): HTMLButtonElement {
  return h(
    'button',
    {
      class: options.danger ? 'btn danger' : 'btn',
      type: 'button',
      onclick: async (event: Event) => {
        event.stopPropagation();
        if (options.confirm && !window.confirm(options.confirm)) return;
        const button = event.currentTarget as HTMLButtonElement;
        button.disabled = true;
        try {
          await run();
          context.notify(`${label}: done`);
        } catch (error) {
          context.notify(`${label} failed: ${(error as Error).message}`, 'error');
        }
        context.refresh();
      },
    },
    label,
  );
}

export function pager(context: ViewContext, total: number, page: number, count: number): HTMLElement | null {
  const pages = Math.max(1, Math.ceil(total / count));
  if (pages <= 1) return null;
  const go = (target: number) => () => {
    const params = new URLSearchParams(context.params);
    params.set('page', String(target));
    context.navigate(`#/${context.path.join('/')}?${params}`);
  };
  return h(
    'nav',
    { class: 'pager', 'aria-label': 'pages' },
    h('button', { class: 'btn', type: 'button', disabled: page <= 0, onclick: go(page - 1) }, '‹ Newer'),
    h('span', {}, `page ${page + 1} of ${Math.min(pages, 1001).toLocaleString('en-US')}`),
    h(
      'button',
      { class: 'btn', type: 'button', disabled: page + 1 >= pages || page >= 1000, onclick: go(page + 1) },
      'Older ›',
    ),
  );
}

export function pageOf(params: URLSearchParams): number {
  const page = Number(params.get('page') ?? 0);
  return Number.isInteger(page) && page >= 0 ? Math.min(page, 1000) : 0;
}
