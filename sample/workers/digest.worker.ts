import { Logger } from '@nestjs/common';
import { Periodic, Worker } from '../../src';

/**
 * A periodic job: every minute, pushed once across however many copies of
 * the sample run. `until_executed` keeps a slow digest from piling up runs:
 * the next minute's slot waits until this one has finished.
 */
@Periodic('* * * * *', { unique: 'until_executed' })
@Worker({ queue: 'default', retry: 2 })
export class DigestWorker {
  private readonly logger = new Logger('DigestWorker');

  perform(): void {
    this.logger.log(`digest for the minute to ${new Date().toISOString()}`);
  }
}
