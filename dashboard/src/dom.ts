/**
 * Elements are built node by node, never from HTML strings: job arguments
 * and error messages are whatever a producer wrote, and must never become
 * markup (the page runs under a CSP with no inline script, and stays safe
 * even if that header is lost by a proxy).
 */
type Child = Node | string | number | null | undefined | false | Child[];
type Attributes = Record<string, string | number | boolean | EventListener | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, '').toLowerCase(), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else
      parent.appendChild(
        typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child,
      );
  }
}

export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** Relative time as Sidekiq's Web UI shows it ("3 minutes ago", "in 2 hours"), with the exact time as a tooltip. */
export function when(epochSeconds: number | null | undefined): HTMLElement | string {
  if (epochSeconds === null || epochSeconds === undefined) return '—';
  const seconds = epochSeconds > 1e11 ? epochSeconds / 1000 : epochSeconds;
  const delta = seconds - Date.now() / 1000;
  const abs = Math.abs(delta);
  const [value, unit] =
    abs < 60
      ? [abs, 'second']
      : abs < 3600
        ? [abs / 60, 'minute']
        : abs < 86400
          ? [abs / 3600, 'hour']
          : [abs / 86400, 'day'];
  const n = Math.max(1, Math.floor(value));
  const text = `${n} ${unit}${n === 1 ? '' : 's'}`;
  return h(
    'time',
    { datetime: new Date(seconds * 1000).toISOString(), title: new Date(seconds * 1000).toLocaleString() },
    delta < 0 ? `${text} ago` : `in ${text}`,
  );
}

export function number(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : value.toLocaleString('en-US');
}

export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 120) return `${seconds.toFixed(1)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/** Arguments as Sidekiq's Web UI shows them: each JSON-encoded, comma-separated, long ones cut. */
export function argsText(args: unknown): string {
  if (!Array.isArray(args)) return JSON.stringify(args) ?? '';
  const text = args.map((arg) => JSON.stringify(arg)).join(', ');
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
