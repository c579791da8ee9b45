import { Cron } from 'croner';

/** `TZ=Europe/Paris 0 9 * * *` or `CRON_TZ=...`: the zone written in front of the fields. */
const ZONE_PREFIX = /^(?:CRON_)?TZ=(\S+)\s+(.+)$/;
/** fugit's form, `0 9 * * * Europe/Paris`: a trailing word that is not a cron field. */
const ZONE_SUFFIX = /^(.+?)\s+([A-Za-z][A-Za-z0-9_+\-]*(?:\/[A-Za-z0-9_+\-]+)+|UTC|GMT)$/;

/** Why a cron expression or zone was refused. */
export class CronSyntaxError extends Error {}

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * A cron expression in an IANA zone: 5 fields, 6 with a leading seconds
 * field, or an alias such as `@hourly`. Only computes fire times; it never
 * schedules anything itself.
 */
export class CronSchedule {
  private constructor(
    /** The fields as written, without a zone. */
    readonly expression: string,
    readonly timeZone: string,
    private readonly cron: Cron,
  ) {}

  /** Parses `expression` (which may carry its own zone) in `timeZone`; throws CronSyntaxError. */
  static parse(expression: string, timeZone?: string): CronSchedule {
    if (typeof expression !== 'string' || expression.trim() === '')
      throw new CronSyntaxError('must be a non-empty cron string');
    let fields = expression.trim().replace(/\s+/g, ' ');
    let zone = timeZone;
    const written = ZONE_PREFIX.exec(fields) ?? ZONE_SUFFIX.exec(fields);
    if (written) {
      const [fieldsPart, zonePart] = ZONE_PREFIX.test(fields) ? [written[2], written[1]] : [written[1], written[2]];
      if (zone !== undefined && zone !== zonePart) {
        throw new CronSyntaxError(`names the zone ${zonePart} but tz is ${zone}`);
      }
      fields = fieldsPart;
      zone = zonePart;
    }
    zone ??= 'UTC';
    if (!isTimeZone(zone)) throw new CronSyntaxError(`has an unknown IANA time zone: ${zone}`);
    let cron: Cron;
    try {
      // with no callback croner schedules nothing either way; `paused` says it is never meant to.
      // Stryker disable next-line BooleanLiteral
      cron = new Cron(fields, { paused: true, timezone: zone });
    } catch (error) {
      throw new CronSyntaxError(`is not a valid cron expression (${(error as Error).message})`);
    }
    // An alias (`@hourly`) is one word: the count never refuses it.
    if (fields.split(' ').length > 6) {
      throw new CronSyntaxError('has more than 6 fields (seconds minutes hours day-of-month month day-of-week)');
    }
    return new CronSchedule(fields, zone, cron);
  }

  /** The latest fire time at or before `nowMs`, in epoch seconds; undefined if it never fired. */
  previousSlot(nowMs: number): number | undefined {
    // croner leaves out a run exactly at the reference instant; 1 ms later includes it.
    const [previous] = this.cron.previousRuns(1, new Date(Math.floor(nowMs) + 1));
    return previous ? Math.floor(previous.getTime() / 1000) : undefined;
  }

  /** The next fire time after `nowMs`, in epoch seconds. */
  nextSlot(nowMs: number): number | undefined {
    const next = this.cron.nextRun(new Date(nowMs));
    return next ? Math.floor(next.getTime() / 1000) : undefined;
  }
}
