import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiProblem } from './problem';

/**
 * The job body's bytes were consumed by a parser that kept no copy. The
 * body IS the Sidekiq job hash, so re-serialising a parsed object (a Ruby
 * `1.0` would come back as `1`) is not an option.
 */
export class BodyBytesLostError extends Error {
  constructor() {
    super(
      "the app's JSON body parser consumed the request body without keeping its bytes: create the app with " +
        'NestFactory.create(AppModule, { rawBody: true }), or leave body parsing to Nest (a parser put on the Express instance before it ' +
        'is handed to Nest runs before WurkApiModule can read its own bodies)',
    );
    this.name = 'BodyBytesLostError';
  }
}

export function tooLarge(maxBytes: number): ApiProblem {
  return new ApiProblem(
    'payload_too_large',
    `The request body may not exceed ${maxBytes} bytes.`,
    { max_bytes: maxBytes },
    { Connection: 'close' },
  );
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
 * it crosses the cap.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
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

/** What the early reader left on a request: its bytes, or the refusal its handler will give once the gate has run. */
type ReadOutcome = { raw: Buffer } | { problem: unknown };
const READ_OUTCOME = Symbol('wurk:body');

type WithOutcome = IncomingMessage & { [READ_OUTCOME]?: ReadOutcome; rawBody?: unknown };

/** The same test body-parser makes: a body is announced by either framing header. */
function announcesBody(req: IncomingMessage): boolean {
  // Stryker disable next-line StringLiteral: any text that is not a number reads as NaN, as '' does.
  return (
    req.headers['transfer-encoding'] !== undefined ||
    !Number.isNaN(Number.parseInt(req.headers['content-length'] ?? '', 10))
  );
}

/**
 * True when a parser placed ahead of the reader already took the body:
 * waiting for the stream's `end` then would wait forever.
 */
function alreadyConsumed(req: IncomingMessage): boolean {
  return req.readableEnded || (req as { body?: unknown }).body !== undefined;
}

/**
 * Reads the body of a request under the API's mount, with the API's cap,
 * and keeps the outcome on the request: its bytes, or the refusal its
 * handler will give once the gate has run (so an unauthenticated caller
 * still gets its 401 first). Never rejects. `stream` is where the bytes
 * come from when a framework hands over its own payload stream (Fastify's
 * preParsing hook); the request otherwise. A body some earlier parser
 * consumed is left alone: `requestBody` then says what to change.
 */
export async function readEarly(req: IncomingMessage, maxBytes: number, stream: IncomingMessage = req): Promise<void> {
  const target = req as WithOutcome;
  if (!announcesBody(req)) {
    target[READ_OUTCOME] = { raw: Buffer.alloc(0) };
    return;
  }
  if (alreadyConsumed(stream)) return;
  try {
    target[READ_OUTCOME] = { raw: await readBody(stream, maxBytes) };
  } catch (problem) {
    target[READ_OUTCOME] = { problem };
  }
}

/**
 * A plain Node middleware placed on the Express app ahead of the app's body
 * parsers. For a request under the API's mount it reads the body itself
 * (`readEarly`) and answers nothing: a parser then finds the stream
 * consumed and skips it, and the framework routes the request as any other.
 */
export function earlyBodyReader(isUnderMount: (req: IncomingMessage) => boolean, maxBytes: number) {
  return (req: IncomingMessage, _res: ServerResponse, next: (error?: unknown) => void): void => {
    if (!isUnderMount(req)) return next();
    void readEarly(req, maxBytes).then(() => next());
  };
}

/** The refusal the early reader stored for this request, if any. */
export function earlyBodyProblem(req: IncomingMessage): unknown {
  const outcome = (req as WithOutcome)[READ_OUTCOME];
  return outcome && 'problem' in outcome ? outcome.problem : undefined;
}

/**
 * The body's bytes, from wherever they are: the early reader's copy; the
 * copy Nest keeps with `rawBody: true` when a parser ran before the reader
 * (one put on an Express instance before it was handed to Nest); or the
 * stream itself when no parser wanted it.
 */
export async function requestBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const target = req as WithOutcome;
  const outcome = target[READ_OUTCOME];
  if (outcome && 'problem' in outcome) throw outcome.problem;
  if (outcome) return outcome.raw;
  if (Buffer.isBuffer(target.rawBody)) {
    if (target.rawBody.length > maxBytes) throw tooLarge(maxBytes);
    return target.rawBody;
  }
  if (alreadyConsumed(req)) throw new BodyBytesLostError();
  return readBody(req, maxBytes);
}
