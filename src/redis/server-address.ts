import type Redis from 'ioredis';

/**
 * The server a set of options points at, for log lines and errors: host
 * and port, or the Sentinel master's name and its Sentinels. Never the
 * password (a URL's or an option's), which logs must not carry.
 */
export function describeServer(options: Record<string, unknown> | undefined, url?: string): string {
  const sentinels = options?.sentinels as Array<{ host?: string; port?: number }> | undefined;
  if (Array.isArray(sentinels) && sentinels.length > 0) {
    const list = sentinels.map((s) => `${s.host ?? '127.0.0.1'}:${s.port ?? 26379}`).join(',');
    return `Sentinel master "${String(options?.name ?? 'mymaster')}" (via ${list})`;
  }
  if (url) return redactUrl(url);
  if (typeof options?.path === 'string') return options.path;
  return `${String(options?.host ?? 'localhost')}:${String(options?.port ?? 6379)}`;
}

/** A redis:// URL with its password replaced by `***` (kept unparsed when it does not parse). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return url.replace(/:[^:@/]*@/, ':***@');
  }
}

/** `host:port` of the socket a connection is on now; undefined before it connects. */
export function connectedAddress(redis: Redis): string | undefined {
  const stream = (redis as unknown as { stream?: { remoteAddress?: string; remotePort?: number } }).stream;
  if (!stream?.remoteAddress) return undefined;
  return `${stream.remoteAddress}:${stream.remotePort}`;
}
