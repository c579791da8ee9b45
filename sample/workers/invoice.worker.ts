import { Logger } from '@nestjs/common';
import { Worker } from '../../src';

/**
 * Named `Billing::InvoiceJob`, as a Rails app calls it, so either side can
 * push it: Ruby with `Sidekiq::Client.push('class' => 'Billing::InvoiceJob', ...)`,
 * TypeScript with `performAsync(InvoiceWorker, ...)`. `custom` members are
 * copied into every payload, as Sidekiq copies options it does not know
 * (Sidekiq's Web UI shows `"team":"billing"` on the job).
 *
 * A negative amount fails: `POST /invoices {"account":7,"cents":-5}` logs
 * one warning per attempt (`… fail: RangeError: …; retry #1 at …`), and the
 * fourth failure says `moved to dead`.
 */
@Worker({
  name: 'Billing::InvoiceJob',
  queue: 'billing',
  retry: 3,
  backtrace: 10,
  tags: ['billing'],
  custom: { team: 'billing' },
})
export class InvoiceWorker {
  private readonly logger = new Logger('InvoiceWorker');

  perform(accountId: number, cents: number): void {
    if (cents < 0) throw new RangeError(`invoice for account ${accountId} has a negative amount`);
    this.logger.log(`invoiced account ${accountId}: ${(cents / 100).toFixed(2)}`);
  }
}
