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

/** `kill` or `killAll` asked of the dead set itself. */
export class AlreadyDeadError extends WurkError {
  constructor() {
    super('entries of the dead set are already dead: run them now or delete them');
  }
}
