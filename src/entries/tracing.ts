/**
 * `nestjs-wurk/tracing`: OpenTelemetry spans. Its own entry, so only apps
 * that import it need @opentelemetry/api installed.
 */
export { WurkTracingModule } from '../nest/tracing/wurk-tracing.module';
export { WurkTracing } from '../observability/tracing/wurk-tracing';
export type { WurkTracingOptions } from '../observability/tracing/wurk-tracing';
export * from '../observability/tracing/semconv';
export { MissingPeerError } from '../observability/load-peer';
