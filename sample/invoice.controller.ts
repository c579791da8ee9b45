import { Body, Controller, Post } from '@nestjs/common';
import { ClientService } from '../src';
import { InvoiceWorker } from './workers/invoice.worker';

/** `POST /invoices {"account","cents"}`: one invoice job; a negative amount shows how a failing job is logged. */
@Controller('invoices')
export class InvoiceController {
  constructor(private readonly jobs: ClientService) {}

  @Post()
  async invoice(@Body() body: { account: number; cents: number }): Promise<{ jid: string | null }> {
    return { jid: await this.jobs.performAsync(InvoiceWorker, body.account, body.cents) };
  }
}
