/** Base of every error wurk throws on purpose, so callers can tell ours from the rest. */
export class WurkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A job hash that Sidekiq would refuse or mangle. `field` names what is wrong, e.g. `args[1].when`. */
export class InvalidJobError extends WurkError {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field} ${reason}`);
  }
}

/** A module option that is missing, of the wrong type or out of range. `option` names it. */
export class WurkConfigError extends WurkError {
  constructor(
    readonly option: string,
    readonly reason: string,
  ) {
    super(`wurk option ${option} ${reason}`);
  }
}

/** A stored payload that is not a JSON object; what the server files in dead instead of running. */
export class InvalidPayloadError extends WurkError {
  constructor(reason: string) {
    super(`invalid job payload: ${reason}`);
  }
}
