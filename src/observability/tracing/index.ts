/**
 * `nestjs-wurk/tracing`: OpenTelemetry spans. Its own entry, so only apps
 * that import it need @opentelemetry/api installed.
 */
export { WurkTracingModule } from '../../nest/tracing/wurk-tracing.module';
export { WurkTracing } from './wurk-tracing';
export type { WurkTracingOptions } from './wurk-tracing';
export * from './semconv';
export { MissingPeerError } from '../load-peer';
