import { Controller, Get, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { WurkHealthIndicator, WurkHealthModule } from '../src/entries/health';
import { WurkMetricsModule } from '../src/entries/metrics';

/** `GET /health` (everything), `/health/live` and `/health/ready` (Kubernetes probes), through @nestjs/terminus. */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly wurk: WurkHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.wurk.isHealthy()]);
  }

  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([() => this.wurk.liveness()]);
  }

  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.wurk.readiness()]);
  }
}

/**
 * What the running sample adds for operators: terminus health and
 * Prometheus metrics at `/metrics`. Kept out of AppModule, whose tests swap
 * wurk for the testing module and have no Redis to report on.
 */
@Module({
  imports: [WurkHealthModule.forRoot({ queueLatency: 60 }), WurkMetricsModule.forRoot()],
  controllers: [HealthController],
})
export class ObservabilityModule {}
