/**
 * `nestjs-wurk/metrics`: Prometheus metrics. Its own entry, so only apps
 * that import it need prom-client installed.
 */
export { WurkMetricsModule } from '../nest/metrics/wurk-metrics.module';
export type { WurkMetricsModuleOptions } from '../nest/metrics/wurk-metrics.module';
export { WurkMetrics } from '../observability/metrics/wurk-metrics';
export type { MetricsSubject, WurkMetricsOptions } from '../observability/metrics/wurk-metrics';
export { MissingPeerError } from '../observability/load-peer';
