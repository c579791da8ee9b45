import { Injectable, Logger } from '@nestjs/common';
import { Worker } from '../../src';

/** A plain injectable service, to show that workers are ordinary providers with DI. */
@Injectable()
export class Mailer {
  private readonly logger = new Logger('Mailer');

  async send(to: string, subject: string): Promise<void> {
    this.logger.log(`→ ${to}: ${subject}`);
  }
}

/** Runs on the `mail` queue with 5 retries; a Ruby app can push it as class "WelcomeMailWorker". */
@Worker({ queue: 'mail', retry: 5 })
export class WelcomeMailWorker {
  constructor(private readonly mailer: Mailer) {}

  async perform(email: string, name: string): Promise<void> {
    await this.mailer.send(email, `Welcome, ${name}!`);
  }
}
