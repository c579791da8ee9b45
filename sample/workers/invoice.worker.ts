import { Logger } from '@nestjs/common';
import { Worker } from '../../src';

/**
 * Named `Billing::InvoiceJob`, as a Rails app calls it, so either side can
 * push it: Ruby with `Sidekiq::Client.push('class' => 'Billing::InvoiceJob', ...)`,
 * TypeScript with `performAsync(InvoiceWorker, ...)`.
 */
@Worker({ name: 'Billing::InvoiceJob', queue: 'billing', backtrace: 10, tags: ['billing'] })
export class InvoiceWorker {
  private readonly logger = new Logger('InvoiceWorker');

  perform(accountId: number, cents: number): void {
    if (cents < 0) throw new RangeError(`invoice for account ${accountId} has a negative amount`);
    this.logger.log(`invoiced account ${accountId}: ${(cents / 100).toFixed(2)}`);
  }
}
