/**
 * `npm run openapi`: writes `docs/openapi.json`, the OpenAPI description of
 * wurk's HTTP API as Swagger's own scan of a Nest app sees it (routes under
 * the default mount, `/api`), for clients generated from it and for review:
 * `test/e2e/openapi-document.test.ts` fails when the committed file and the
 * code disagree, so every change to the API's contract shows up in a diff.
 */
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WURK_BEARER_SCHEME, WurkApiModule, WurkModule } from '../src';

export const OPENAPI_FILE = join(__dirname, 'openapi.json');

/** The document, from an app that only mounts the API (no Redis is reached: the app is never initialised). */
export async function wurkOpenApiDocument(): Promise<OpenAPIObject> {
  @Module({
    imports: [
      WurkModule.forRoot({
        redis: { lazyConnect: true },
        processing: false,
        api: { tokens: [{ token: 'openapi-document-token-000', scopes: ['admin'] }] },
      }),
      WurkApiModule.register(),
    ],
  })
  class ApiOnly {}
  const app = await NestFactory.create(ApiOnly, { logger: false, abortOnError: false });
  try {
    const config = new DocumentBuilder()
      .setTitle('wurk HTTP API')
      .setDescription(
        'Jobs, queues, retries, dead jobs, processes and periodic entries of a Sidekiq-compatible Redis. Problems are application/problem+json.',
      )
      .addBearerAuth(undefined, WURK_BEARER_SCHEME)
      .build();
    return SwaggerModule.createDocument(app, config);
  } finally {
    await app.close();
  }
}

/** The document as committed: two-space JSON and a final newline. */
export function renderOpenApi(document: OpenAPIObject): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

if (require.main === module) {
  wurkOpenApiDocument().then(
    (document) => {
      writeFileSync(OPENAPI_FILE, renderOpenApi(document));
      console.log(`wrote ${OPENAPI_FILE}`);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
