import 'reflect-metadata';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Controller, INestApplication, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ChildProcess, spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ClientService, Worker, WurkModule } from '../../src';
import { WurkTracingModule } from '../../src/entries/tracing';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';
import { TS_LOADER } from '../support/ts-loader-path';

/** Declared on the web side too, so performAsync is typed; only the worker process runs it. */
@Worker({ queue: 'traced' })
class TracedWorker {
  perform(note: string): string {
    return note;
  }
}

/** Stands in for HTTP instrumentation: the request's SERVER span is active while the handler enqueues. */
@Controller('orders')
class OrdersController {
  constructor(private readonly jobs: ClientService) {}

  @Post()
  create(): Promise<{ jid: string | null }> {
    return trace.getTracer('http').startActiveSpan('POST /orders', { kind: SpanKind.SERVER }, async (span) => {
      try {
        return { jid: await this.jobs.performAsync(TracedWorker, 'order 1') };
      } finally {
        span.end();
      }
    });
  }
}

interface WorkerSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
}

describe('OpenTelemetry across a web process and a worker process', () => {
  const redis = usePrivateRedis();
  const exporter = new InMemorySpanExporter();
  let web: INestApplication;
  let worker: ChildProcess;
  let output = '';

  beforeAll(async () => {
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());

    worker = spawn(process.execPath, ['-r', TS_LOADER, join(__dirname, 'fixtures', 'traced-worker.ts')], {
      cwd: join(__dirname, '..', '..'),
      env: { ...process.env, REDIS_URL: redis.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    worker.stdout?.on('data', (chunk) => (output += chunk));
    worker.stderr?.on('data', (chunk) => (output += chunk));

    @Module({
      imports: [WurkModule.forRoot({ redis: { url: redis.url }, processing: false }), WurkTracingModule.forRoot()],
      controllers: [OrdersController],
    })
    class WebModule {}
    web = await NestFactory.create(WebModule, { logger: false });
    await web.listen(0, '127.0.0.1');
    await waitFor(() => output.includes('READY'), {
      timeout: 60000,
      what: `the worker process to boot (output: ${output})`,
    });
  });

  afterAll(async () => {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.kill('SIGTERM');
      await exited;
    }
    await web?.close();
    trace.disable();
    context.disable();
    propagation.disable();
  });

  function workerSpans(): WorkerSpan[] {
    return output
      .split('\n')
      .filter((line) => line.startsWith('SPAN '))
      .map((line) => JSON.parse(line.slice(5)) as WorkerSpan);
  }

  it('makes the request that enqueued a job the ancestor of its process span, through the publish span', async () => {
    const port = (web.getHttpServer().address() as AddressInfo).port;
    const response = await fetch(`http://127.0.0.1:${port}/orders`, { method: 'POST' });
    const { jid } = (await response.json()) as { jid: string };

    const webSpans = exporter.getFinishedSpans();
    const request = webSpans.find((span) => span.name === 'POST /orders')!;
    const publish = webSpans.find((span) => span.name === 'traced publish')!;
    expect(publish.kind).toBe(SpanKind.PRODUCER);
    expect(publish.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(publish.attributes).toMatchObject({
      'messaging.system': 'sidekiq',
      'messaging.destination.name': 'traced',
      'messaging.message.id': jid,
      'messaging.operation.type': 'send',
      'messaging.sidekiq.job_class': 'TracedWorker',
    });

    const processSpan = await waitFor(() => workerSpans().find((span) => span.name === 'traced process'), {
      timeout: 20000,
      what: 'the process span from the worker',
    });
    expect(processSpan.kind).toBe(SpanKind.CONSUMER);
    expect(processSpan.traceId).toBe(request.spanContext().traceId);
    expect(processSpan.parentSpanId).toBe(publish.spanContext().spanId);
    expect(processSpan.attributes).toMatchObject({
      'messaging.system': 'sidekiq',
      'messaging.destination.name': 'traced',
      'messaging.message.id': jid,
      'messaging.operation.type': 'process',
      'wurk.attempt': 1,
    });
    const inside = await waitFor(() => workerSpans().find((span) => span.name === 'inside perform'), {
      what: 'the span opened in perform',
    });
    expect(inside.parentSpanId).toBe(processSpan.spanId);
  });
});
