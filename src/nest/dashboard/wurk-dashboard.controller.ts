import { Get, Inject, NotFoundException, Param, Req, Res } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { below } from '../http/router-syntax';
import { nodeRequest, PlatformRequest, PlatformResponse, takeResponse } from '../http/node-http';
import { DashboardAssets } from './dashboard-assets';
import { WURK_DASHBOARD_SETTINGS, type DashboardSettings } from './wurk-dashboard.tokens';

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

function securityHeaders(response: ServerResponse): void {
  response.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.setHeader('Referrer-Policy', 'no-referrer');
}

/** A 200 written on Node's response, the same on every platform; a HEAD gets the headers alone. */
function write(response: ServerResponse, type: string, cache: string, body: string | Buffer, head: boolean): void {
  response.statusCode = 200;
  response.setHeader('Content-Type', type);
  response.setHeader('Cache-Control', cache);
  response.setHeader('Content-Length', Buffer.byteLength(body));
  response.end(head ? undefined : body);
}

function redirect(response: ServerResponse, location: string): void {
  response.statusCode = 301;
  response.setHeader('Location', location);
  response.setHeader('Content-Length', 0);
  response.end();
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
  index(@Req() request: PlatformRequest, @Res() reply: PlatformResponse): void {
    const req = nodeRequest(request);
    const [path, query] = ((req as { originalUrl?: string }).originalUrl ?? req.url ?? '/').split('?');
    // The page loads its assets and finds the API by relative URLs: they resolve right only under a trailing slash.
    if (!path.endsWith('/')) return redirect(takeResponse(reply), `${path}/${query ? `?${query}` : ''}`);
    // Built before the response is taken over: a failure (assets not built) is then Nest's to answer.
    const page = this.assets.page(this.settings);
    const response = takeResponse(reply);
    securityHeaders(response);
    write(response, 'text/html; charset=utf-8', 'no-store', page, req.method === 'HEAD');
  }

  /** An asset; on Fastify also the page at the trailing slash, which its router does not give to `index`. */
  @below(Get, ':file')
  asset(
    @Param() params: Record<string, string | undefined>,
    @Req() request: PlatformRequest,
    @Res() reply: PlatformResponse,
  ): void {
    const file = params.file ?? params['*'] ?? '';
    if (file === '') return this.index(request, reply);
    const asset = this.assets.asset(file);
    if (!asset) throw new NotFoundException();
    const response = takeResponse(reply);
    securityHeaders(response);
    write(response, asset.type, 'no-cache', asset.body, nodeRequest(request).method === 'HEAD');
  }
}
