import { Api, ApiError } from './api.js';
import { batches } from './batches.js';
import { busy } from './busy.js';
import { h, replace } from './dom.js';
import { overview } from './overview.js';
import { queue, queues } from './queues.js';
import { dead, retries, scheduled } from './sets.js';
import { flows } from './flows.js';
import { job } from './job.js';
import { limits } from './limits.js';
import { metrics } from './metrics.js';
import { redisFooter } from './redis-footer.js';
import { cron } from './status.js';
import type { View, ViewContext } from './view.js';

const ROUTES: Record<string, { title: string; view: View; nav?: boolean }> = {
  overview: { title: 'Overview', view: overview, nav: true },
  queues: { title: 'Queues', view: queues, nav: true },
  busy: { title: 'Busy', view: busy, nav: true },
  scheduled: { title: 'Scheduled', view: scheduled, nav: true },
  retries: { title: 'Retries', view: retries, nav: true },
  dead: { title: 'Dead', view: dead, nav: true },
  cron: { title: 'Periodic', view: cron, nav: true },
  metrics: { title: 'Metrics', view: metrics, nav: true },
  limits: { title: 'Limits', view: limits, nav: true },
  jobs: { title: 'Jobs', view: job, nav: true },
  batches: { title: 'Batches', view: batches, nav: true },
  flows: { title: 'Flows', view: flows, nav: true },
};

const THEME_KEY = 'wurk-dashboard-theme';
const POLL_KEY = 'wurk-dashboard-poll';
/** Seconds between live polls until the operator picks another (Sidekiq's Web UI polls every 5 s too). */
const DEFAULT_POLL = '5';

/**
 * Settings the server put on the root element (no inline script under the CSP): where the API is, and read-only mode.
 */
const root = document.getElementById('wurk') as HTMLElement;
const api = new Api(new URL(root.dataset.api ?? '../api/v1', document.baseURI).pathname.replace(/\/$/, ''));
const readOnly = root.dataset.readOnly === 'true';

let canAct = false;
let pollTimer: number | undefined;
let rendering = 0;

function route(): { name: string; path: string[]; params: URLSearchParams } {
  const [pathPart, query = ''] = location.hash.replace(/^#\/?/, '').split('?');
  const path = pathPart.split('/').filter(Boolean).map(decodeURIComponent);
  const name = path[0] && ROUTES[path[0]] ? path[0] : 'overview';
  if (path.length === 0) path.push(name);
  if (name === 'queues' && path.length > 1) return { name: 'queue', path, params: new URLSearchParams(query) };
  return { name, path, params: new URLSearchParams(query) };
}

function notify(message: string, kind: 'ok' | 'error' = 'ok'): void {
  const box = document.getElementById('toast') as HTMLElement;
  replace(box, h('div', { class: `toast ${kind}`, role: 'status' }, message));
  window.setTimeout(() => box.replaceChildren(), 4000);
}

async function render(): Promise<void> {
  const ticket = ++rendering;
  const { name, path, params } = route();
  const view = name === 'queue' ? queue : ROUTES[name].view;
  const context: ViewContext = {
    api,
    canAct,
    params,
    path,
    refresh: () => void render(),
    navigate: (hash) => (location.hash === hash ? void render() : (location.hash = hash)),
    notify,
  };
  for (const link of document.querySelectorAll('nav.main a'))
    link.classList.toggle('active', link.getAttribute('data-route') === (name === 'queue' ? 'queues' : name));
  const main = document.getElementById('main') as HTMLElement;
  try {
    const content = await view(context);
    // A slower render of an older route must not overwrite a newer one.
    if (ticket === rendering) replace(main, content);
    void redisFooter(api, document.getElementById('footer') as HTMLElement);
    document.title = `${ROUTES[name === 'queue' ? 'queues' : name].title} · wurk`;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return showLogin('The token was refused.');
    if (ticket === rendering)
      replace(
        main,
        h(
          'section',
          { class: 'card' },
          h('p', { class: 'error' }, `Could not load this page: ${(error as Error).message}`),
        ),
      );
  }
}

/**
 * Reads the token's scopes from the API: admin (or enqueue+read for nothing more) decides whether action buttons show.
 */
async function signIn(token: string): Promise<boolean> {
  api.token = token;
  try {
    const discovery = await api.get<{ scopes?: string[]; read_only?: boolean }>('');
    canAct = !readOnly && !discovery.read_only && (discovery.scopes ?? []).includes('admin');
    return true;
  } catch (error) {
    api.token = null;
    showLogin(
      error instanceof ApiError && error.status === 401
        ? 'The token was refused.'
        : `Could not reach the API: ${(error as Error).message}`,
    );
    return false;
  }
}

function showLogin(problem?: string): void {
  api.token = null;
  document.body.classList.add('signed-out');
  const form = h(
    'form',
    {
      class: 'card login',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const token = String(new FormData(event.currentTarget as HTMLFormElement).get('token') ?? '').trim();
        if (token && (await signIn(token))) start();
      },
    },
    h('h2', {}, 'Sign in'),
    h('p', { class: 'muted' }, 'Paste an API token (scope read to look, admin to act). It is kept in this tab only.'),
    problem ? h('p', { class: 'error' }, problem) : null,
    h('input', {
      name: 'token',
      type: 'password',
      autocomplete: 'off',
      placeholder: 'token',
      'aria-label': 'API token',
      required: true,
    }),
    h('button', { class: 'btn primary', type: 'submit' }, 'Sign in'),
  );
  replace(document.getElementById('main') as HTMLElement, form);
}

/**
 * A poll redraws the page, so it waits while the operator is in the middle
 * of something a redraw would undo: typing in a field, reading an opened
 * backtrace, or a page whose numbers do not move by the second (Metrics,
 * as Sidekiq's Web UI does not refresh it either) or that costs a scan.
 */
function pollWouldInterrupt(): boolean {
  const active = document.activeElement;
  const main = document.getElementById('main');
  if (active instanceof HTMLInputElement || active instanceof HTMLTextAreaElement) return true;
  if (main?.querySelector('details[open], input:checked, [data-no-poll]')) return true;
  const { name, path } = route();
  // A jid page scans every queue and set: worth it once, not every few seconds.
  return name === 'metrics' || (name === 'jobs' && path.length > 1);
}

function schedulePoll(): void {
  window.clearInterval(pollTimer);
  const seconds = Number(localStorage.getItem(POLL_KEY) ?? DEFAULT_POLL);
  if (seconds > 0) pollTimer = window.setInterval(() => pollWouldInterrupt() || void render(), seconds * 1000);
}

function header(): HTMLElement {
  const poll = h(
    'select',
    {
      'aria-label': 'live poll',
      onchange: (event: Event) => {
        localStorage.setItem(POLL_KEY, (event.currentTarget as HTMLSelectElement).value);
        schedulePoll();
      },
    },
    ...[
      ['0', 'Live poll: off'],
      ['2', 'every 2 s'],
      ['5', 'every 5 s'],
      ['10', 'every 10 s'],
      ['30', 'every 30 s'],
    ].map(([value, label]) =>
      h('option', { value, selected: (localStorage.getItem(POLL_KEY) ?? DEFAULT_POLL) === value }, label),
    ),
  );
  const theme = h(
    'button',
    { class: 'btn ghost', type: 'button', 'aria-label': 'toggle dark mode', onclick: toggleTheme },
    '◐',
  );
  const signOut = h(
    'button',
    { class: 'btn ghost', type: 'button', onclick: () => (showLogin(), window.clearInterval(pollTimer)) },
    'Sign out',
  );
  return h(
    'header',
    { class: 'top' },
    h('a', { class: 'brand', href: '#/overview' }, h('span', { class: 'logo' }, 'w'), 'wurk'),
    h(
      'nav',
      { class: 'main' },
      ...Object.entries(ROUTES)
        .filter(([, r]) => r.nav)
        .map(([key, r]) => h('a', { href: `#/${key}`, 'data-route': key }, r.title)),
    ),
    h(
      'div',
      { class: 'controls' },
      readOnly ? h('span', { class: 'badge warn' }, 'read-only') : null,
      poll,
      theme,
      signOut,
    ),
  );
}

function applyTheme(): void {
  const stored = localStorage.getItem(THEME_KEY);
  const dark = stored ? stored === 'dark' : window.matchMedia('(prefers-color-scheme: dark)').matches;
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
}

function toggleTheme(): void {
  localStorage.setItem(THEME_KEY, document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark');
  applyTheme();
}

function start(): void {
  document.body.classList.remove('signed-out');
  schedulePoll();
  void render();
}

async function boot(): Promise<void> {
  applyTheme();
  replace(
    root,
    header(),
    h('main', { id: 'main' }),
    h('footer', { id: 'footer', class: 'footer' }),
    h('div', { id: 'toast', 'aria-live': 'polite' }),
  );
  window.addEventListener('hashchange', () => void render());
  const token = api.token;
  if (token && (await signIn(token))) start();
  else if (!token) showLogin();
}

void boot();
