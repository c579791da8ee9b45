import { hashSegment, pathSegment } from './path.js';
import { h, number, when } from './dom.js';
import { actionButton, card, table, View, ViewContext } from './view.js';

interface FlowNodeJson {
  index: number;
  name: string | null;
  class: string;
  queue: string;
  jid: string;
  state: string;
  depends_on: number[];
  remaining: number;
  on_failure: string;
  error: string | null;
}

interface FlowJson {
  fid: string;
  state: string;
  total: number;
  pending: number;
  succeeded: number;
  depth: number;
  width: number;
  created_at: number | null;
  finished_at: number | null;
  failed_at: number | null;
  abandoned_at?: number | null;
  dead_nodes: number[];
  nodes: FlowNodeJson[];
}

const TONE: Record<string, string> = {
  succeeded: 'ok',
  running: '',
  enqueued: '',
  waiting: '',
  ignored: 'warn',
  failed: 'bad',
  dead: 'bad',
  broken: 'bad',
  abandoned: 'warn',
};

function badge(state: string): HTMLElement {
  return h('span', { class: `badge ${TONE[state] ?? ''}` }, state);
}

/** A node as its name, or `#index` for a Ruby node without one. */
function label(node: FlowNodeJson | undefined, index: number): string {
  return node?.name ?? `#${index}`;
}

function lookupForm(context: ViewContext, fid: string): HTMLElement {
  return h(
    'form',
    {
      class: 'search',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const value = String(new FormData(event.currentTarget as HTMLFormElement).get('fid') ?? '').trim();
        if (value) context.navigate(`#/flows/${hashSegment(value)}`);
      },
    },
    h('input', { name: 'fid', placeholder: 'fid', value: fid, size: 20, 'aria-label': 'fid' }),
    h('button', { class: 'btn', type: 'submit' }, 'Look up'),
  );
}

/** A flow still running or failed can be abandoned (POST /v1/flows/:fid/abandon); a settled one has nothing to stop. */
function abandonButton(context: ViewContext, flow: FlowJson): HTMLElement | null {
  if (!context.canAct || (flow.state !== 'running' && flow.state !== 'failed')) return null;
  return actionButton(context, 'Abandon', () => context.api.post(`/flows/${pathSegment(flow.fid)}/abandon`), {
    danger: true,
    confirm: `Abandon flow ${flow.fid}? No node of it runs again, and its nodes' records and batches are deleted; a job already queued still runs.`,
  });
}

function nodeRow(flow: FlowJson, node: FlowNodeJson): HTMLElement {
  const byIndex = new Map(flow.nodes.map((each) => [each.index, each]));
  const deps = node.depends_on.map((index) => label(byIndex.get(index), index)).join(', ');
  return h(
    'tr',
    {},
    h('td', {}, label(node, node.index)),
    h('td', {}, node.class),
    h('td', {}, badge(node.state), node.error ? h('div', { class: 'muted' }, node.error) : null),
    h('td', {}, deps || '—'),
    h('td', {}, node.remaining > 0 && node.state === 'waiting' ? number(node.remaining) : '—'),
    h('td', {}, node.on_failure),
    h('td', {}, h('a', { href: `#/jobs/${hashSegment(node.jid)}` }, node.jid)),
  );
}

/**
 * One flow by fid (GET /v1/flows/:fid): its state and counters, and every node with its dependencies, state and
 * failure policy, each linked to its job. There is no list of flows in the HTTP contract: a flow is looked up by id.
 */
export const flows: View = async (context) => {
  const fid = context.path[1] ?? '';
  if (!fid)
    return card(
      'Flows',
      lookupForm(context, ''),
      h('p', { class: 'muted' }, 'Find a flow by its fid (FlowService.create returns it): its nodes and their states.'),
    );
  const flow = await context.api.get<FlowJson>(`/flows/${pathSegment(fid)}`);
  const facts: Array<[string, Node | string]> = [
    ['state', badge(flow.state)],
    ['nodes', `${number(flow.succeeded)} of ${number(flow.total)} settled, ${number(flow.pending)} pending`],
    ['depth / width', `${number(flow.depth)} / ${number(flow.width)}`],
    ['created', when(flow.created_at)],
    ['finished', when(flow.finished_at)],
    ['failed', when(flow.failed_at)],
    ...(flow.abandoned_at ? [['abandoned', when(flow.abandoned_at)] as [string, string]] : []),
  ];
  return h(
    'div',
    { class: 'stack' },
    card(
      `Flow ${flow.fid}`,
      lookupForm(context, fid),
      abandonButton(context, flow),
      h(
        'table',
        { class: 'facts' },
        h('tbody', {}, ...facts.map(([name, value]) => h('tr', {}, h('th', {}, name), h('td', {}, value)))),
      ),
    ),
    card(
      'Nodes',
      table(
        ['node', 'class', 'state', 'depends on', 'waiting for', 'on failure', 'jid'],
        flow.nodes.map((node) => nodeRow(flow, node)),
      ),
    ),
  );
};
