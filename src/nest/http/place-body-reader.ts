import type { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage } from 'node:http';
import { earlyBodyReader, readEarly } from '../../api/body';
import { onAdapter } from './on-adapter';

/** The few members of Fastify's request and instance used here, so the package needs no Fastify types. */
interface FastifyRequestLike {
  raw: IncomingMessage;
  headers: Record<string, string | string[] | undefined>;
}
type PreParsingHook = (
  request: FastifyRequestLike,
  reply: unknown,
  payload: IncomingMessage,
  done: (error: Error | null, payload?: IncomingMessage) => void,
) => void;
interface FastifyLike {
  addHook(name: 'preParsing', hook: PreParsingHook): unknown;
}

/**
 * What Fastify's body parsing is told a request under the mount carries:
 * nothing (its own request view only; Node's headers, which the API reads,
 * are untouched). The API reads its own bytes, so no content type can make
 * Fastify answer 415 or a malformed JSON body a Fastify 400: the contract
 * answers them, as it does on Express.
 */
const BODYLESS = { 'content-length': '0', 'content-type': undefined, 'transfer-encoding': undefined };

/**
 * The bytes of a request under the mount, read in Fastify's preParsing
 * stage (after the app's onRequest hooks and middleware, before any
 * content-type parser), then the parsers stepped past.
 */
function fastifyReader(isUnderMount: (req: IncomingMessage) => boolean, maxBytes: number): PreParsingHook {
  return (request, _reply, payload, done) => {
    if (!isUnderMount(request.raw)) return done(null, payload);
    void readEarly(request.raw, maxBytes, payload).then(() => {
      request.headers = BODYLESS;
      done(null, payload);
    });
  };
}

/**
 * Puts the API's body reader ahead of the app's body parsers (see
 * `onAdapter` for when), so the job bytes are kept as sent without
 * `rawBody: true`. On Express the reader is a middleware, on Fastify a
 * preParsing hook; another adapter gets none (the API then needs `rawBody: true`).
 */
export function placeBodyReader(
  adapterHost: HttpAdapterHost,
  isUnderMount: (req: IncomingMessage) => boolean,
  maxBytes: number,
): void {
  onAdapter(adapterHost, (adapter) => {
    const type = adapter.getType?.();
    if (type === 'express') adapter.use(earlyBodyReader(isUnderMount, maxBytes));
    if (type === 'fastify')
      (adapter.getInstance() as FastifyLike).addHook('preParsing', fastifyReader(isUnderMount, maxBytes));
  });
}
