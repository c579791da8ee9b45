import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { JobPayload } from '../../src';
import { WurkTracing } from '../../src/entries/tracing';
import type { ServerContext } from '../../src';

function job(): JobPayload {
  return JobPayload.fromEntries([
    ['class', 'MailWorker'],
    ['args', [1]],
    ['queue', 'mail'],
    ['jid', 'aaaaaaaaaaaaaaaaaaaaaaaa'],
  ]);
}

function serverContext(payload: JobPayload): ServerContext {
  const execution = { jid: payload.jid, queue: 'mail', attempt: 1, payload, signal: new AbortController().signal };
  return { job: payload, queue: 'mail', attempt: 1, execution };
}

describe('WurkTracing middleware', () => {
  it('costs nothing without a tracer provider: no span kept, nothing written into the payload', async () => {
    const tracing = new WurkTracing(api);
    const payload = job();
    const before = payload.toString();
    let ran = false;
    await tracing.clientMiddleware({ job: payload }, async () => undefined);
    await tracing.serverMiddleware(serverContext(payload), async () => void (ran = true));
    expect(payload.toString()).toBe(before);
    expect(ran).toBe(true);
  });

  describe('with an SDK registered', () => {
    const exporter = new InMemorySpanExporter();
    beforeAll(() => {
      api.trace.setGlobalTracerProvider(
        new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
      );
      api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    });
    afterAll(() => {
      api.trace.disable();
      api.context.disable();
      api.propagation.disable();
    });

    it("carries W3C traceparent as a top-level member (Ruby's carrier), links in `link` mode, and records a failed run", async () => {
      const payload = job();
      await new WurkTracing(api).clientMiddleware({ job: payload }, async () => undefined);
      const publish = exporter.getFinishedSpans().find((span) => span.name === 'mail publish')!;
      expect(payload.get('traceparent')).toBe(`00-${publish.spanContext().traceId}-${publish.spanContext().spanId}-01`);

      const stored = JobPayload.parse(payload.toString());
      await expect(
        new WurkTracing(api, { propagation: 'link' }).serverMiddleware(serverContext(stored), async () => {
          throw new RangeError('bad row');
        }),
      ).rejects.toThrow('bad row');
      const processed = exporter.getFinishedSpans().find((span) => span.name === 'mail process')!;
      expect(processed.spanContext().traceId).not.toBe(publish.spanContext().traceId);
      expect(processed.links.map((link) => link.context.spanId)).toEqual([publish.spanContext().spanId]);
      expect(processed.status).toMatchObject({ code: api.SpanStatusCode.ERROR, message: 'bad row' });
      expect(processed.events.map((event) => event.name)).toEqual(['exception']);
    });
  });
});
