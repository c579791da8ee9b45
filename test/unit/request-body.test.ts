import type { IncomingMessage, ServerResponse } from 'node:http';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import {
  BodyBytesLostError,
  earlyBodyProblem,
  earlyBodyReader,
  readBody,
  readEarly,
  requestBody,
} from '../../src/api/body';
import type { ApiProblem } from '../../src/api/problem';

/** A request stream with the given headers; the test writes its body. */
function request(headers: Record<string, string> = {}): PassThrough & IncomingMessage {
  return Object.assign(new PassThrough(), { headers }) as unknown as PassThrough & IncomingMessage;
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('resolved');
    },
    (error: unknown) => error,
  );
}

function expectTooLarge(problem: unknown, maxBytes: number): void {
  const { type, status, detail, extensions, headers } = problem as ApiProblem;
  expect({ type, status, detail, extensions, headers }).toEqual({
    type: 'payload_too_large',
    status: 413,
    detail: `The request body may not exceed ${maxBytes} bytes.`,
    extensions: { max_bytes: maxBytes },
    headers: { Connection: 'close' },
  });
}

/** Writes `bytes` and resolves once the stream's data listeners (the drain's first) have seen them. */
async function send(req: PassThrough, bytes: number): Promise<void> {
  const seen = once(req, 'data');
  req.write(Buffer.alloc(bytes));
  await seen;
}

describe('readBody', () => {
  it('resolves the bytes as sent, chunks joined in order', async () => {
    const req = request();
    const body = readBody(req, 10);
    req.write('abc');
    req.end(Buffer.from([0xff, 0x00]));
    expect(await body).toEqual(Buffer.from([0x61, 0x62, 0x63, 0xff, 0x00]));
  });

  it('a body of exactly the cap is read; one byte more is a 413', async () => {
    const exact = request();
    const read = readBody(exact, 4);
    exact.end('abcd');
    expect((await read).toString()).toBe('abcd');

    const over = request();
    const refused = rejectionOf(readBody(over, 4));
    over.write('ab');
    over.write('cde');
    expectTooLarge(await refused, 4);
  });

  it('a declared length over the cap is refused before a byte is read; the declared cap itself is not', async () => {
    const req = request({ 'content-length': '5' });
    expectTooLarge(await rejectionOf(readBody(req, 4)), 4);
    const fits = request({ 'content-length': '4' });
    const read = readBody(fits, 4);
    fits.end('abcd');
    expect((await read).toString()).toBe('abcd');
  });

  it('after a refusal, up to four times the cap is drained; past that the socket is cut', async () => {
    const drained = request({ 'content-length': '1000' });
    expectTooLarge(await rejectionOf(readBody(drained, 10)), 10);
    await send(drained, 40);
    expect(drained.destroyed).toBe(false);
    await send(drained, 1);
    expect(drained.destroyed).toBe(true);

    const chunked = request();
    const refused = rejectionOf(readBody(chunked, 10));
    chunked.write(Buffer.alloc(11));
    expectTooLarge(await refused, 10);
    await send(chunked, 40);
    expect(chunked.destroyed).toBe(false);
    await send(chunked, 1);
    expect(chunked.destroyed).toBe(true);
  });

  it('drains a refused request even when something had paused it', async () => {
    const paused = request({ 'content-length': '1000' });
    paused.pause();
    expectTooLarge(await rejectionOf(readBody(paused, 10)), 10);
    await send(paused, 41);
    expect(paused.destroyed).toBe(true);
  });

  it('after a refusal only the drain listens: the read stops collecting, and a later socket error is swallowed', async () => {
    const req = request();
    const refused = rejectionOf(readBody(req, 4));
    req.write('abcde');
    expectTooLarge(await refused, 4);
    expect([
      req.listenerCount('data'),
      req.listenerCount('end'),
      req.listenerCount('aborted'),
      req.listenerCount('error'),
    ]).toEqual([1, 0, 0, 1]);
    expect(() => req.emit('error', new Error('ECONNRESET'))).not.toThrow();
    const declared = request({ 'content-length': '5' });
    expectTooLarge(await rejectionOf(readBody(declared, 4)), 4);
    expect(() => declared.emit('error', new Error('ECONNRESET'))).not.toThrow();
  });

  it('stops listening after a stream error or an abort too', async () => {
    for (const event of ['error', 'aborted'] as const) {
      const req = request();
      const failed = rejectionOf(readBody(req, 10));
      if (event === 'error') req.emit('error', new Error('socket hang up'));
      else req.emit('aborted');
      await failed;
      expect([
        req.listenerCount('data'),
        req.listenerCount('end'),
        req.listenerCount('aborted'),
        req.listenerCount('error'),
      ]).toEqual([0, 0, 0, 0]);
    }
  });

  it('a stream error rejects with that error; an abort rejects naming the client', async () => {
    const broken = request();
    const failed = rejectionOf(readBody(broken, 10));
    broken.emit('error', new Error('socket hang up'));
    expect(((await failed) as Error).message).toBe('socket hang up');

    const aborted = request();
    const gone = rejectionOf(readBody(aborted, 10));
    aborted.emit('aborted');
    expect(((await gone) as Error).message).toBe('request aborted by the client');
  });

  it('stops listening once settled: a later error is not its to handle', async () => {
    const req = request();
    const read = readBody(req, 10);
    req.end('ok');
    await read;
    expect(req.listenerCount('data')).toBe(0);
    expect(req.listenerCount('error')).toBe(0);
    expect(req.listenerCount('aborted')).toBe(0);
    expect(req.listenerCount('end')).toBe(0);
  });
});

describe('earlyBodyReader', () => {
  const res = {} as ServerResponse;
  /** Runs the middleware; resolves with what it passed to next once it did. */
  const run = (reader: ReturnType<typeof earlyBodyReader>, req: IncomingMessage) =>
    new Promise<unknown>((resolve) => reader(req, res, resolve));

  it('leaves a request outside the mount alone: nothing read, nothing stored', async () => {
    const req = request({ 'content-length': '3' });
    req.end('abc');
    expect(
      await run(
        earlyBodyReader(() => false, 10),
        req,
      ),
    ).toBeUndefined();
    expect(req.readableLength).toBe(3);
    expect(earlyBodyProblem(req)).toBeUndefined();
  });

  it('a request without a framing header has an empty body, read from nowhere', async () => {
    const req = request({ 'content-length': 'abc' });
    req.write('ignored');
    await run(
      earlyBodyReader(() => true, 10),
      req,
    );
    expect(await requestBody(req, 10)).toEqual(Buffer.alloc(0));
    expect(req.readableLength).toBe(7);
  });

  it.each<Record<string, string>>([{ 'content-length': '3' }, { 'transfer-encoding': 'chunked' }])(
    'reads a body announced by %j and keeps it for the handler',
    async (headers) => {
      const req = request(headers);
      req.end('abc');
      await run(
        earlyBodyReader(() => true, 10),
        req,
      );
      expect(earlyBodyProblem(req)).toBeUndefined();
      expect((await requestBody(req, 10)).toString()).toBe('abc');
    },
  );

  it('a refusal is stored for the handler, not answered: next() gets no error', async () => {
    const req = request({ 'content-length': '11' });
    expect(
      await run(
        earlyBodyReader(() => true, 10),
        req,
      ),
    ).toBeUndefined();
    expectTooLarge(earlyBodyProblem(req), 10);
    expectTooLarge(await rejectionOf(requestBody(req, 10)), 10);
  });

  it('passes at once on a body a parser ahead of it already read (waiting for its end would hang), leaving the fix to requestBody', async () => {
    const ended = request({ 'content-length': '3' });
    ended.end('abc');
    ended.resume();
    await once(ended, 'end');
    expect(
      await run(
        earlyBodyReader(() => true, 10),
        ended,
      ),
    ).toBeUndefined();
    expect(await rejectionOf(requestBody(ended, 10))).toBeInstanceOf(BodyBytesLostError);

    const parsed = Object.assign(request({ 'content-length': '3' }), { body: {} });
    expect(
      await run(
        earlyBodyReader(() => true, 10),
        parsed,
      ),
    ).toBeUndefined();
    expect(await rejectionOf(requestBody(parsed, 10))).toBeInstanceOf(BodyBytesLostError);
  });
});

describe('readEarly with a payload stream of its own (Fastify preParsing)', () => {
  it('reads the bytes from the stream given and keeps them on the request', async () => {
    const req = request({ 'content-length': '3' });
    const payload = request();
    payload.end('xyz');
    await readEarly(req, 10, payload);
    expect((await requestBody(req, 10)).toString()).toBe('xyz');
    expect(req.readableLength).toBe(0);
  });
});

describe('requestBody without the early reader', () => {
  it("takes Nest's rawBody copy, refused over the cap", async () => {
    const req = Object.assign(request(), { rawBody: Buffer.from('abcd') });
    expect((await requestBody(req, 4)).toString()).toBe('abcd');
    expectTooLarge(await rejectionOf(requestBody(req, 3)), 3);
  });

  it('a body a parser consumed without keeping its bytes is a BodyBytesLostError naming the fix', async () => {
    const parsed = Object.assign(request(), { body: {} });
    const error = await rejectionOf(requestBody(parsed, 10));
    expect(error).toBeInstanceOf(BodyBytesLostError);
    expect(error).toMatchObject({
      name: 'BodyBytesLostError',
      message:
        "the app's JSON body parser consumed the request body without keeping its bytes: create the app with " +
        'NestFactory.create(AppModule, { rawBody: true }), or leave body parsing to Nest (a parser put on the Express instance before it ' +
        'is handed to Nest runs before WurkApiModule can read its own bodies)',
    });

    const ended = request();
    ended.end('x');
    ended.resume();
    await new Promise((resolve) => ended.once('end', resolve));
    expect(await rejectionOf(requestBody(ended, 10))).toBeInstanceOf(BodyBytesLostError);
  });

  it('reads the stream itself when no parser wanted it', async () => {
    const req = request();
    const body = requestBody(req, 10);
    req.end('fresh');
    expect((await body).toString()).toBe('fresh');
  });
});
