import type { IncomingMessage } from 'node:http';
import { ApiProblem } from './problem';

/** Thrown when a body parser of the host app read the request before wurk could (see README "HTTP API"). */
export class BodyAlreadyReadError extends Error {
  constructor() {
    super(
      'the request body was consumed before the wurk API could read it: create the Nest app with { bodyParser: false } ' +
        'and apply your own parsers through excludeWurkApi(), so the API reads and caps its bodies itself',
    );
    this.name = 'BodyAlreadyReadError';
  }
}

export function tooLarge(maxBytes: number): ApiProblem {
  return new ApiProblem('payload_too_large', `The request body may not exceed ${maxBytes} bytes.`, { max_bytes: maxBytes }, { Connection: 'close' });
}

/** Bytes a refused upload may still send before the socket is cut instead of drained. */
const DRAIN_FACTOR = 4;

/**
 * After a 413 the rest of the body is still on the wire. Draining a bounded
 * amount lets the client read the answer instead of a reset; past that the
 * socket is destroyed, so an endless upload costs nothing more.
 */
function discardRest(req: IncomingMessage, maxBytes: number): void {
  let drained = 0;
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > maxBytes * DRAIN_FACTOR) req.destroy();
  });
  req.on('error', () => undefined);
  req.resume();
}

/**
 * Reads the raw body, at most `maxBytes + 1` bytes of it: a declared length
 * over the cap is refused before reading anything, a chunked body as soon as
 * it crosses the cap. The app's body parser never decides, so its own limit
 * and its error pages never reach an API client.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  if ((req as { _body?: unknown })._body === true || req.readableEnded) return Promise.reject(new BodyAlreadyReadError());
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    discardRest(req, maxBytes);
    return Promise.reject(tooLarge(maxBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        discardRest(req, maxBytes);
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onAborted = () => onError(new Error('request aborted by the client'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}
