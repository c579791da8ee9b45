/**
 * `nestjs-wurk/health`: the @nestjs/terminus indicator. Its own entry, so
 * only apps that import it need @nestjs/terminus installed.
 */
export { WurkHealthIndicator, WurkHealthModule, WURK_HEALTH_OPTIONS } from '../nest/health/wurk-health.indicator';
export { WurkHealthProbe } from '../observability/health/wurk-health-probe';
export type { HealthSubject, WurkHealthOptions, WurkHealthReport } from '../observability/health/wurk-health-probe';
export { MissingPeerError } from '../observability/load-peer';
