import { Controller, Get, INestApplication, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { request as httpRequest } from 'node:http';
import { WurkApiModule, WurkApiOptions, WurkModule, WurkModuleOptions } from '../../src';

export const ADMIN_TOKEN = 'admin-token-000000000000000000';
export const ENQUEUE_TOKEN = 'enqueue-token-0000000000000000';
export const READ_TOKEN = 'read-token-00000000000000000000';
export const PRODUCER_TOKEN = 'producer-token-000000000000000';

export const TOKENS: WurkApiOptions['tokens'] = [
  { token: ADMIN_TOKEN, scopes: ['admin'] },
  { token: ENQUEUE_TOKEN, scopes: ['enqueue'] },
  { token: READ_TOKEN, scopes: ['read'] },
  { token: PRODUCER_TOKEN, scopes: ['enqueue', 'read'] },
];

/** A route of the host app, to show requests outside the mount are not the API's. */
@Controller()
class HostController {
  @Get('hello')
  hello(): { hello: string } {
    return { hello: 'host' };
  }
}

/** These apps only produce: no processor may take the jobs the tests look for in Redis. */
export const PRODUCER_ONLY: Record<string, unknown> = { processing: false };

export interface ApiApp {
  app: INestApplication;
  port: number;
  close(): Promise<void>;
}

/** The HTTP platforms the API and the dashboard are served on; the end-to-end suites run on each. */
export const PLATFORMS = ['express', 'fastify'] as const;
export type Platform = (typeof PLATFORMS)[number];

/** Nest's default (Express) when no adapter is given; Fastify's adapter with its defaults. */
export function platformAdapter(platform: Platform): FastifyAdapter | undefined {
  return platform === 'fastify' ? new FastifyAdapter() : undefined;
}

/** A Nest app on `platform` (an adapter must be given to NestFactory.create only when there is one). */
export function createApp(
  module: Type<unknown>,
  platform: Platform,
  options: Record<string, unknown> = {},
): Promise<INestApplication> {
  const adapter = platformAdapter(platform);
  const settings = { logger: false as const, abortOnError: false, ...options };
  return adapter ? NestFactory.create(module, adapter, settings) : NestFactory.create(module, settings);
}

export interface ApiAppOptions {
  /** The HTTP platform; default express. */
  platform?: Platform;
  /** `WurkApiModule.register({ path })`; default `api`. */
  path?: string;
  /** Providers of the app module (workers, periodic entries). */
  providers?: Function[];
}

/**
 * A real Nest app listening on a loopback socket, made as a user makes one:
 * a plain `NestFactory.create(AppModule)` (Nest's own body parsers on),
 * importing `WurkApiModule` next to its own controllers.
 */
export async function startApiApp(
  redisUrl: string,
  api: WurkApiOptions | undefined,
  extra: WurkModuleOptions = {},
  options: ApiAppOptions = {},
): Promise<ApiApp> {
  @Module({
    imports: [
      WurkModule.forRoot({ redis: { url: redisUrl }, api, ...PRODUCER_ONLY, ...extra }),
      WurkApiModule.register({ path: options.path }),
    ],
    controllers: [HostController],
    providers: (options.providers ?? []) as never,
  })
  class AppModule {}
  const app = await createApp(AppModule, options.platform ?? 'express');
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return { app, port: address.port, close: () => app.close() };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** Send the body in these pieces with chunked transfer encoding. */
  chunks?: Buffer[];
  token?: string;
}

/** One HTTP request over a fresh connection, with full control of method, headers and framing. */
export function call(port: number, options: RawRequest): Promise<RawResponse> {
  const headers: Record<string, string | string[]> = { ...(options.headers ?? {}) };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    if (options.chunks) {
      for (const chunk of options.chunks) req.write(chunk);
      req.end();
    } else {
      req.end(options.body);
    }
  });
}

export function post(
  port: number,
  path: string,
  token: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return call(port, {
    method: 'POST',
    path,
    token,
    body: text,
    headers: { 'content-type': 'application/json', ...headers },
  });
}
