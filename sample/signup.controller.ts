import { Body, Controller, Post } from '@nestjs/common';
import { ClientService } from '../src';
import { InvoiceWorker } from './workers/invoice.worker';
import { WelcomeMailWorker } from './workers/welcome-mail.worker';

/** `POST /signup {"email","name"}`: the jobs a sign-up enqueues, through the typed client. */
@Controller('signup')
export class SignupController {
  constructor(private readonly jobs: ClientService) {}

  @Post()
  async signUp(
    @Body() body: { email: string; name: string },
  ): Promise<Record<string, string | null | (string | null)[]>> {
    return {
      welcome: await this.jobs.performAsync(WelcomeMailWorker, body.email, body.name),
      reminder: await this.jobs.performIn({ hours: 1 }, WelcomeMailWorker, body.email, `${body.name} (one hour later)`),
      invoice: await this.jobs.set({ queue: 'critical' }).performAsync(InvoiceWorker, 42, 1999),
      ruby: await this.jobs.push({ class: 'HardWorker', args: [body.email], queue: 'ruby' }),
      batch: await this.jobs.pushBulk({
        class: 'Billing::InvoiceJob',
        args: [
          [1, 100],
          [2, 200],
          [3, 300],
        ],
        queue: 'billing',
      }),
    };
  }
}
