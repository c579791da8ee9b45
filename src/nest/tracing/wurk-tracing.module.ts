import { DynamicModule, Inject, Injectable, Module, OnModuleInit } from '@nestjs/common';
import { loadPeer } from '../../observability/load-peer';
import { WurkTracing, WurkTracingOptions } from '../../observability/tracing/wurk-tracing';
import { ClientService } from '../client.service';
import { WurkServer } from '../wurk-server';

// Loaded when this entry (`nestjs-wurk/tracing`) is imported, never from the package root.
const otel = loadPeer<typeof import('@opentelemetry/api')>('@opentelemetry/api', 'nestjs-wurk/tracing');

/** Puts the tracing middleware on the client and the server once the app's providers exist. */
@Injectable()
class WurkTracingInstaller implements OnModuleInit {
  constructor(
    @Inject(WurkTracing) private readonly tracing: WurkTracing,
    private readonly client: ClientService,
    private readonly server: WurkServer,
  ) {}

  onModuleInit(): void {
    // A test may override ClientService with a plain mock.
    if (typeof (this.client as Partial<ClientService>).use === 'function')
      this.client.use(this.tracing.clientMiddleware);
    this.server.use(this.tracing.serverMiddleware);
  }
}

/**
 * OpenTelemetry spans for pushes and runs (optional peer `@opentelemetry/api`).
 * Register a tracer provider and a propagator as usual (the Node SDK does
 * both); without them the spans are no-ops and payloads carry nothing.
 */
@Module({})
export class WurkTracingModule {
  /**
   * Provides WurkTracing and, at module init, adds its middleware to the
   * client (a `<queue> publish` producer span per push, the trace context
   * written into the job hash as Ruby's opentelemetry-instrumentation-sidekiq
   * does) and to the server (a `<queue> process` consumer span per run,
   * related by `propagation`). Nothing is written to Redis beyond those
   * payload members. A bad `propagation` throws WurkConfigError when the
   * provider is built; importing this entry throws MissingPeerError without
   * @opentelemetry/api.
   */
  static forRoot(options: WurkTracingOptions = {}): DynamicModule {
    return {
      module: WurkTracingModule,
      providers: [{ provide: WurkTracing, useFactory: () => new WurkTracing(otel, options) }, WurkTracingInstaller],
      exports: [WurkTracing],
    };
  }
}
