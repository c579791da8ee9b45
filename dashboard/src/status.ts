import { pathSegment } from './path.js';
import { h, when } from './dom.js';
import { actionButton, card, table, View } from './view.js';

interface CronEntry {
  pjid: string;
  class: string;
  cron: string;
  tz: string;
  args: unknown[];
  queue: string;
  disabled: boolean;
  last_slot: number | null;
  next_slot: number | null;
  running_jid: string | null;
}

export const cron: View = async (context) => {
  const { entries } = await context.api.get<{ entries: CronEntry[] }>('/cron');
  return card(
    'Periodic jobs',
    table(
      ['Job', 'Schedule', 'Queue', 'Last slot', 'Next', 'State', ''],
      entries.map((entry) =>
        h(
          'tr',
          {},
          h('td', {}, h('strong', {}, entry.class), h('div', { class: 'muted args' }, JSON.stringify(entry.args))),
          h(
            'td',
            {},
            h('code', {}, entry.cron),
            entry.tz && entry.tz !== 'UTC' ? h('div', { class: 'muted' }, entry.tz) : null,
          ),
          h('td', {}, entry.queue),
          h('td', {}, when(entry.last_slot)),
          h('td', {}, entry.disabled ? '—' : when(entry.next_slot)),
          h(
            'td',
            {},
            entry.disabled
              ? h('span', { class: 'badge warn' }, 'disabled')
              : h('span', { class: 'badge ok' }, 'enabled'),
            entry.running_jid ? h('div', { class: 'muted' }, `running ${entry.running_jid}`) : null,
          ),
          h(
            'td',
            { class: 'actions' },
            context.canAct
              ? actionButton(context, entry.disabled ? 'Enable' : 'Disable', () =>
                  context.api.post(`/cron/${pathSegment(entry.pjid)}/${entry.disabled ? 'enable' : 'disable'}`),
                )
              : null,
          ),
        ),
      ),
      'No periodic jobs are declared.',
    ),
  );
};
