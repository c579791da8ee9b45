/**
 * The dashboard's only way to Redis: wurk's HTTP API (contract §1), with the
 * operator's bearer token. So the dashboard can never do what the token's
 * scopes do not allow: the server refuses it (403), whatever the page shows.
 */
const TOKEN_KEY = 'wurk-dashboard-token';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    detail: string,
  ) {
    super(detail);
  }
}

/** JSON.parse's source-text access and JSON.rawJSON (Chromium 114+, Firefox 135+, Safari 18.4+); absent elsewhere. */
type SourceReviver = (key: string, value: unknown, context?: { source?: string }) => unknown;
const rawJSON = (JSON as unknown as { rawJSON?: (text: string) => unknown }).rawJSON;

/**
 * Keeps a number as its stored text when the text says more than the
 * number does: a Ruby `1.0` stays `1.0` and a 20-digit id keeps its digits
 * when shown with JSON.stringify (the API sends payloads as stored bytes).
 * Where the browser lacks source access, numbers read as JavaScript's.
 */
const keepNumberText: SourceReviver = (_key, value, context) =>
  typeof value === 'number' && rawJSON && context?.source !== undefined && context.source !== String(value)
    ? rawJSON(context.source)
    : value;

/** A number kept as its stored text reads back as a number wherever the page computes with it. */
export function numeric(value: unknown): number {
  return typeof value === 'number' ? value : Number(JSON.stringify(value));
}

export interface Page<T> {
  total: number;
  page: number;
  count: number;
  items: T[];
}

export class Api {
  constructor(readonly base: string) {}

  get token(): string | null {
    return sessionStorage.getItem(TOKEN_KEY);
  }

  set token(value: string | null) {
    if (value) sessionStorage.setItem(TOKEN_KEY, value);
    else sessionStorage.removeItem(TOKEN_KEY);
  }

  get<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query))
      if (value !== undefined && value !== '') params.set(key, String(value));
    const search = params.toString();
    return this.send<T>('GET', search ? `${path}?${search}` : path);
  }

  post<T>(path: string): Promise<T> {
    return this.send<T>('POST', path);
  }

  delete<T>(path: string): Promise<T> {
    return this.send<T>('DELETE', path);
  }

  private async send<T>(method: string, path: string): Promise<T> {
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${this.token ?? ''}`, Accept: 'application/json' },
      credentials: 'same-origin',
    });
    const text = await response.text();
    const body = text
      ? (JSON.parse(text, keepNumberText as (key: string, value: unknown) => unknown) as Record<string, unknown>)
      : {};
    if (!response.ok)
      throw new ApiError(
        response.status,
        String(body.type ?? 'error'),
        String(body.detail ?? body.title ?? response.statusText),
      );
    return body as T;
  }
}
