import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `dashboard/dist` sits at the package root, three levels above both `src/nest/dashboard` and `dist/nest/dashboard`.
 */
const CANDIDATES = [join(__dirname, '..', '..', '..', 'dashboard', 'dist')];

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  html: 'text/html; charset=utf-8',
};

/** Only files of these names are ever read: a request path never reaches the file system as given. */
const ASSET_NAME = /^[a-z][a-z0-9-]*\.(js|css)$/;

export interface DashboardAsset {
  body: Buffer;
  type: string;
}

/**
 * The dashboard's built files (`npm run build:dashboard`, shipped in the
 * package), read once and kept: a handful of small files.
 */
export class DashboardAssets {
  private readonly cache = new Map<string, DashboardAsset | null>();
  private found: string | undefined;

  constructor(private readonly given?: string) {}

  /**
   * Found at the first request, not at boot: an app (or a test of it) that
   * imports the dashboard but never serves it must start even from a source
   * checkout whose dashboard was not built.
   */
  get dir(): string {
    this.found ??= this.given ?? CANDIDATES.find((candidate) => existsSync(join(candidate, 'index.html')));
    if (!this.found)
      throw new Error(
        `wurk dashboard assets not found (looked in ${CANDIDATES.join(', ')}); run npm run build:dashboard`,
      );
    return this.found;
  }

  /** A built asset by file name, or null for any other name. */
  asset(name: string): DashboardAsset | null {
    if (!ASSET_NAME.test(name)) return null;
    if (!this.cache.has(name)) {
      const path = join(this.dir, name);
      this.cache.set(
        name,
        existsSync(path) ? { body: readFileSync(path), type: TYPES[name.split('.').pop() as string] } : null,
      );
    }
    return this.cache.get(name) ?? null;
  }

  /** The page, with its settings in data attributes (the CSP allows no inline script to carry them). */
  page(settings: { apiUrl: string; readOnly: boolean }): string {
    const template = readFileSync(join(this.dir, 'index.html'), 'utf8');
    return template
      .replace('__WURK_API__', escapeAttribute(settings.apiUrl))
      .replace('__WURK_READ_ONLY__', String(settings.readOnly));
  }
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
