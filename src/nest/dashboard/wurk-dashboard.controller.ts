import { Get, Inject, NotFoundException, Param, Req, Res } from '@nestjs/common';
import { DashboardAssets } from './dashboard-assets';
import { WURK_DASHBOARD_SETTINGS, type DashboardSettings } from './wurk-dashboard.tokens';

/** The few response methods used, so the package needs no @types/express. */
interface HttpResponse {
  setHeader(name: string, value: string): void;
  status(code: number): HttpResponse;
  send(body: string | Buffer): void;
  redirect(status: number, url: string): void;
}

/**
 * A strict policy: scripts and styles from this origin only, nothing
 * inline, no frames, no third-party hosts. The page talks to the API with
 * fetch (connect-src 'self').
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function securityHeaders(response: HttpResponse): void {
  response.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.setHeader('Referrer-Policy', 'no-referrer');
}

/**
 * Serves the dashboard's page and assets. Every datum on the page comes
 * from the HTTP API with the operator's token, so this controller holds no
 * data and needs no token; the app's own guards apply to it like to any
 * controller (put the dashboard behind the host app's auth that way).
 */
export class WurkDashboardController {
  constructor(
    private readonly assets: DashboardAssets,
    @Inject(WURK_DASHBOARD_SETTINGS) private readonly settings: DashboardSettings,
  ) {}

  @Get()
  index(@Req() request: { originalUrl?: string; url: string }, @Res() response: HttpResponse): void {
    const url = request.originalUrl ?? request.url;
    const [path, query] = url.split('?');
    // The page loads its assets and finds the API by relative URLs: they resolve right only under a trailing slash.
    if (!path.endsWith('/')) return response.redirect(301, `${path}/${query ? `?${query}` : ''}`);
    securityHeaders(response);
    response.setHeader('Content-Type', 'text/html; charset=utf-8');
    response.setHeader('Cache-Control', 'no-store');
    response.status(200).send(this.assets.page(this.settings));
  }

  @Get(':file')
  asset(@Param('file') file: string, @Res() response: HttpResponse): void {
    const asset = this.assets.asset(file);
    if (!asset) throw new NotFoundException();
    securityHeaders(response);
    response.setHeader('Content-Type', asset.type);
    response.setHeader('Cache-Control', 'no-cache');
    response.status(200).send(asset.body);
  }
}
