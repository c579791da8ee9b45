import type * as OtelApi from '@opentelemetry/api';
import type { Context, Span, TextMapGetter, TextMapSetter, Tracer } from '@opentelemetry/api';
import type { ClientContext, ClientMiddlewareFn } from '../../client/client';
import { WurkConfigError } from '../../job/errors';
import type { JobPayload } from '../../job/payload';
import type { ServerContext, ServerMiddlewareFn } from '../../server/server-middleware';
import {
  ATTR_MESSAGING_DESTINATION_NAME,
  ATTR_MESSAGING_MESSAGE_ID,
  ATTR_MESSAGING_OPERATION_NAME,
  ATTR_MESSAGING_OPERATION_TYPE,
  ATTR_MESSAGING_SYSTEM,
  ATTR_SIDEKIQ_JOB_CLASS,
  ATTR_WURK_ATTEMPT,
  MESSAGING_OPERATION_TYPE_VALUE_PROCESS,
  MESSAGING_OPERATION_TYPE_VALUE_SEND,
  MESSAGING_SYSTEM_VALUE_SIDEKIQ,
} from './semconv';

/**
 * Options of `WurkTracingModule.forRoot()`: `propagation`, how a job's span relates to its producer's (`child`, `link`
 * or `none`).
 */
export interface WurkTracingOptions {
  /**
   * How a job's `process` span relates to the producer's trace: `child`
   * (default: one trace from the request to the job), `link` (a new trace
   * linked to the producer's, Ruby's default), or `none`. Set Ruby's
   * `propagation_style` to the same value when both sides run jobs.
   */
  propagation?: 'child' | 'link' | 'none';
  /** The tracer to use (default: `trace.getTracer('nestjs-wurk')` of the global provider). */
  tracer?: Tracer;
}

/**
 * The trace context travels as top-level members of the job hash
 * (`traceparent`, `tracestate`, `baggage`, whatever the global propagator
 * writes), exactly where Ruby's opentelemetry-instrumentation-sidekiq puts
 * it (it injects into the job hash itself), so a Ruby job pushed from a
 * Node trace continues it and the other way round. Sidekiq ignores members
 * it does not know.
 */
const payloadSetter: TextMapSetter<JobPayload> = {
  set: (job, key, value) => void job.set(key, value),
};

/** Only string members are carrier values; anything else in a payload is the job's own. */
const payloadGetter: TextMapGetter<JobPayload> = {
  keys: (job) => job.keys(),
  get: (job, key) => {
    const value = job.get<unknown>(key);
    return typeof value === 'string' ? value : undefined;
  },
};

/**
 * OpenTelemetry spans for jobs: `<queue> publish` (PRODUCER) around each
 * push, `<queue> process` (CONSUMER) around each run, named and attributed
 * as Ruby's instrumentation names them. With no tracer provider registered,
 * the API hands out non-recording spans and a no-op propagator: nothing is
 * written into payloads and no span is kept.
 */
export class WurkTracing {
  private readonly tracer: Tracer;
  private readonly propagation: 'child' | 'link' | 'none';

  constructor(
    private readonly api: typeof OtelApi,
    options: WurkTracingOptions = {},
  ) {
    const propagation = options.propagation ?? 'child';
    if (!['child', 'link', 'none'].includes(propagation))
      throw new WurkConfigError('tracing.propagation', 'must be "child", "link" or "none"');
    this.propagation = propagation;
    this.tracer = options.tracer ?? api.trace.getTracer('nestjs-wurk');
  }

  readonly clientMiddleware: ClientMiddlewareFn = async ({ job }: ClientContext, next) => {
    const { api } = this;
    const span = this.tracer.startSpan(`${job.queue} publish`, {
      kind: api.SpanKind.PRODUCER,
      attributes: this.attributes(job, MESSAGING_OPERATION_TYPE_VALUE_SEND, 'publish'),
    });
    const context = api.trace.setSpan(api.context.active(), span);
    api.propagation.inject(context, job, payloadSetter);
    await this.finish(span, () => api.context.with(context, next));
  };

  readonly serverMiddleware: ServerMiddlewareFn = async ({ job, queue, attempt }: ServerContext, next) => {
    const { api } = this;
    const producer =
      this.propagation === 'none' ? api.ROOT_CONTEXT : api.propagation.extract(api.ROOT_CONTEXT, job, payloadGetter);
    const producerSpan = api.trace.getSpanContext(producer);
    const attributes = {
      ...this.attributes(job, MESSAGING_OPERATION_TYPE_VALUE_PROCESS, 'process', queue),
      [ATTR_WURK_ATTEMPT]: attempt,
    };
    const options = { kind: api.SpanKind.CONSUMER, attributes, links: [] as OtelApi.Link[] };
    let parent: Context = api.ROOT_CONTEXT;
    if (this.propagation === 'child') parent = producer;
    else if (this.propagation === 'link' && producerSpan && api.isSpanContextValid(producerSpan))
      options.links.push({ context: producerSpan });
    const span = this.tracer.startSpan(`${queue || job.queue} process`, options, parent);
    await this.finish(span, () => api.context.with(api.trace.setSpan(parent, span), next));
  };

  private attributes(job: JobPayload, type: string, name: string, queue = job.queue): OtelApi.Attributes {
    return {
      [ATTR_MESSAGING_SYSTEM]: MESSAGING_SYSTEM_VALUE_SIDEKIQ,
      [ATTR_MESSAGING_DESTINATION_NAME]: queue,
      [ATTR_MESSAGING_MESSAGE_ID]: job.jid,
      [ATTR_MESSAGING_OPERATION_TYPE]: type,
      [ATTR_MESSAGING_OPERATION_NAME]: name,
      [ATTR_SIDEKIQ_JOB_CLASS]: job.get<string>('wrapped') ?? job.className,
    };
  }

  /** Ends the span after `body`, recording an error (and rethrowing it) as the failure of the push or the run. */
  private async finish(span: Span, body: () => Promise<void>): Promise<void> {
    try {
      await body();
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({
        code: this.api.SpanStatusCode.ERROR,
        message: error instanceof Error ? error.message : String(error),
      });
      throw error;
    } finally {
      span.end();
    }
  }
}
