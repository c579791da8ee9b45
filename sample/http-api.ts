import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { addWurkApiToDocument, excludeWurkApi, WurkApiOptions } from '../src';

/** Where the sample mounts the HTTP API: routes at /api/v1/... */
export const API_MOUNT = '/api';

type Handler = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;
// @types/express is not a dependency of this repo; json() is all the sample needs from it.
const { json } = require('express') as { json(): Handler };

/**
 * The HTTP API options from the environment: WURK_API_TOKEN (at least 20
 * characters) is an admin token. Without it the routes answer 404.
 */
export function sampleApiOptions(): WurkApiOptions {
  const token = process.env.WURK_API_TOKEN;
  return {
    mount: API_MOUNT,
    tokens: token ? [{ token, scopes: ['admin'] }] : [],
    enqueueClasses: ['HardWorker', 'WelcomeMailWorker', 'Billing::InvoiceJob', 'ReportWorker'],
    rateLimit: { limit: 600, interval: 'minute' },
  };
}

/** The OpenAPI document of the app: its own controllers plus the wurk API. */
export function openApiDocument(app: INestApplication) {
  const config = new DocumentBuilder().setTitle('wurk sample').setVersion('1.0').addBearerAuth().build();
  return addWurkApiToDocument(SwaggerModule.createDocument(app, config), API_MOUNT);
}

/**
 * The host-app side of the HTTP API. The app is created with
 * `{ bodyParser: false }`, so the API reads its own bodies; the app's own
 * routes get their JSON parser here, wrapped so it skips the API mount.
 * Serves GET /openapi.json.
 */
export function setUpHttpApi(app: INestApplication): void {
  app.use(excludeWurkApi(API_MOUNT, json()));
  const document = JSON.stringify(openApiDocument(app));
  app.use((req: IncomingMessage, res: ServerResponse, next: () => void) => {
    if (req.method !== 'GET' || req.url !== '/openapi.json') return next();
    res.setHeader('Content-Type', 'application/json');
    res.end(document);
  });
}
