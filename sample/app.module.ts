import { Module } from '@nestjs/common';
import { WurkApiModule, WurkDashboardModule, WurkModule } from '../src';
import { sampleApiOptions } from './http-api';
import { InvoiceController } from './invoice.controller';
import { SignupController } from './signup.controller';
import { ReportController } from './report.controller';
import { ReportWorker } from './workers/report.worker';
import { DigestWorker } from './workers/digest.worker';
import { InvoiceWorker } from './workers/invoice.worker';
import { ThumbnailWorker } from './workers/thumbnail.worker';
import { Mailer, WelcomeMailWorker } from './workers/welcome-mail.worker';

/**
 * The app's wurk import, held in a constant so a test can swap it for the
 * testing module: `overrideModule(sampleWurk).useModule(WurkTestingModule.forRoot())`.
 */
export const sampleWurk = WurkModule.forRootAsync({
  useFactory: () => ({
    redis: { url: process.env.REDIS_URL },
    server: {
      queues: [
        ['critical', 3],
        ['mail', 2],
        ['billing', 1],
        ['default', 1],
      ],
      // WURK_LOG_JOBS=all adds a start and a done line per job; a bad value stops start-up naming server.logJobs.
      logJobs: (process.env.WURK_LOG_JOBS ?? 'failures') as 'failures',
    },
    api: sampleApiOptions(),
    // ReportWorker's progress shows up at most once a second (default 5).
    status: { progressInterval: 1 },
  }),
});

/**
 * The HTTP API's controllers, at /api/v1/... (global prefix and RouterModule
 * apply as to any controller). A constant too: it reads Redis, so the
 * sample's tests swap it out with the wurk import.
 */
export const sampleApi = WurkApiModule.register({ path: 'api' });

/** The sample app: every wurk feature through the public API. */
@Module({
  // The dashboard at /dashboard/: sign in with WURK_API_TOKEN (it reads and acts through the API above).
  imports: [sampleWurk, sampleApi, WurkDashboardModule.register({ path: 'dashboard' })],
  controllers: [SignupController, InvoiceController, ReportController],
  providers: [Mailer, WelcomeMailWorker, InvoiceWorker, DigestWorker, ReportWorker, ThumbnailWorker],
})
export class AppModule {}
