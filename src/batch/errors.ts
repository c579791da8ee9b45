import { WurkError } from '../job/errors';

/** A batch definition or a job added to a batch that wurk refuses; `field` names what is wrong. */
export class InvalidBatchError extends WurkError {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`batch ${field} ${reason}`);
  }
}

/** No batch with this bid: never opened, expired (30 days, or a day after it succeeded) or deleted. */
export class BatchNotFoundError extends WurkError {
  constructor(readonly bid: string) {
    super(`no batch ${JSON.stringify(bid)}`);
  }
}
