import { WurkError } from '../job/errors';

/** An entry whose payload cannot be read asked to run: it has no queue to go to. Kill or delete it instead. */
export class MalformedEntryError extends WurkError {
  constructor(
    readonly set: string,
    readonly score: string,
    readonly reason: string,
  ) {
    super(`the ${set} entry at ${score} cannot run: ${reason}`);
  }
}
