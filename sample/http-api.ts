import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { WURK_BEARER_SCHEME, WurkApiOptions } from '../src';

/** Where the sample mounts the HTTP API (`WurkApiModule.register({ path: 'api' })`): routes at /api/v1/... */
export const API_MOUNT = '/api';

/**
 * The HTTP API options from the environment: WURK_API_TOKEN (at least 20
 * characters) is an admin token. Without it the routes answer 404.
 */
export function sampleApiOptions(): WurkApiOptions {
  const token = process.env.WURK_API_TOKEN;
  return {
    tokens: token ? [{ token, scopes: ['admin'] }] : [],
    enqueueClasses: ['HardWorker', 'WelcomeMailWorker', 'Billing::InvoiceJob', 'ReportWorker'],
    rateLimit: { limit: 600, interval: 'minute' },
  };
}

/**
 * Swagger's own scan: wurk's routes are controllers, so they are in the
 * document with the app's. Served at /openapi (UI) and /openapi.json.
 */
export function setUpOpenApi(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('wurk sample')
    .setVersion('1.0')
    .addBearerAuth(undefined, WURK_BEARER_SCHEME)
    .build();
  SwaggerModule.setup('openapi', app, () => SwaggerModule.createDocument(app, config), {
    jsonDocumentUrl: 'openapi.json',
  });
}
