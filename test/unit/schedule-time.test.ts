import { InvalidJobError } from '../../src/job/errors';
import {
  ABSOLUTE_EPOCH_THRESHOLD,
  epochForAt,
  epochForInterval,
  describeSeconds,
  InvalidScheduleError,
  looksLikeMilliseconds,
  MAX_SCHEDULE_SECONDS,
} from '../../src/client/schedule-time';
import { thrownBy } from '../support/config-error';

const NOW = 1_795_942_246.5; // 2026-11-30, epoch seconds
const DAY = 86_400;

const refusal = (run: () => unknown): InvalidScheduleError => thrownBy(InvalidScheduleError, run);

describe('performAt / performIn times', () => {
  it('reads numbers as Sidekiq does: seconds from now, or an absolute epoch from 1e9 up', () => {
    expect(epochForInterval(60, NOW)).toBe(NOW + 60);
    expect(epochForInterval(NOW + 60, NOW)).toBe(NOW + 60);
    expect(epochForAt(NOW + 60, NOW)).toBe(NOW + 60);
  });

  it('takes a Date and an explicit duration', () => {
    expect(epochForAt(new Date((NOW + 90) * 1000), NOW)).toBe(NOW + 90);
    expect(epochForInterval({ minutes: 5 }, NOW)).toBe(NOW + 300);
    expect(epochForInterval({ days: 1, hours: 2, seconds: 3 }, NOW)).toBe(NOW + DAY + 7203);
  });

  it('refuses an epoch in milliseconds with a typed error that names the fix', () => {
    const error = refusal(() => epochForAt((NOW + 60) * 1000, NOW));
    expect(error).toBeInstanceOf(InvalidJobError);
    expect(error.field).toBe('at');
    expect(error.message).toMatch(
      /epoch in milliseconds \(read as seconds it is the year 58,\d{3}\).*pass 1795942306\.5, a Date/,
    );
    expect(refusal(() => epochForInterval((NOW + 60) * 1000, NOW)).message).toMatch(/epoch in milliseconds/);
  });

  it('refuses anything more than ten years away', () => {
    expect(epochForInterval(9 * 365 * DAY, NOW)).toBe(NOW + 9 * 365 * DAY);
    expect(refusal(() => epochForInterval(11 * 365 * DAY, NOW)).message).toMatch(/more than ten years away/);
    expect(refusal(() => epochForInterval({ weeks: 600 }, NOW)).message).toMatch(/more than ten years away/);
    expect(refusal(() => epochForAt(new Date((NOW + 11 * 365 * DAY) * 1000), NOW)).message).toMatch(
      /more than ten years away/,
    );
  });

  it('refuses a malformed duration, naming the unit', () => {
    expect(refusal(() => epochForInterval({ mins: 5 } as never, NOW)).field).toBe('interval.mins');
    expect(refusal(() => epochForInterval({}, NOW)).field).toBe('interval');
    expect(refusal(() => epochForInterval(Number.NaN, NOW)).field).toBe('interval');
    expect(refusal(() => epochForAt(new Date('nope'), NOW)).message).toMatch(/Invalid Date/);
  });
});

describe('performAt / performIn: the edges of each rule', () => {
  const TEN_YEARS = 315_576_000; // 10 × 365.25 days

  it('puts the ten-year limit at exactly 10 × 365.25 days, inclusive', () => {
    expect(MAX_SCHEDULE_SECONDS).toBe(TEN_YEARS);
    expect(epochForInterval(TEN_YEARS, NOW)).toBe(NOW + TEN_YEARS);
    expect(epochForAt(NOW + TEN_YEARS, NOW)).toBe(NOW + TEN_YEARS);
    const beyond = refusal(() => epochForInterval(TEN_YEARS + 1, NOW));
    expect(beyond.field).toBe('interval');
    expect(beyond.message).toBe(
      `interval is more than ten years away (${TEN_YEARS + 1} lands in the year 2,036); a number is seconds, as in Sidekiq`,
    );
    const duration = refusal(() => epochForInterval({ weeks: 600 }, NOW));
    expect(duration.field).toBe('interval');
    expect(duration.message).toBe(
      'interval is more than ten years away ({"weeks":600} lands in the year 2,038); a number is seconds, as in Sidekiq',
    );
  });

  it('reads exactly 1e9 as an absolute epoch (Sidekiq: below 1e9 is relative)', () => {
    expect(epochForInterval(ABSOLUTE_EPOCH_THRESHOLD, NOW)).toBe(ABSOLUTE_EPOCH_THRESHOLD);
    // Just below, it is seconds from now: some thirty years out, so refused.
    expect(refusal(() => epochForInterval(ABSOLUTE_EPOCH_THRESHOLD - 1, NOW)).message).toMatch(
      /^interval is more than ten years away \(999999999 lands/,
    );
  });

  it('names the interval field when an absolute epoch given to performIn is refused', () => {
    const millis = refusal(() => epochForInterval((NOW + 60) * 1000, NOW));
    expect(millis.field).toBe('interval');
    const far = refusal(() => epochForInterval(NOW + TEN_YEARS + 1, NOW));
    expect(far.field).toBe('interval');
    expect(far.message).toMatch(/^interval is more than ten years away/);
  });

  it('refuses a non-finite interval with the message naming what it takes', () => {
    for (const bad of [Number.NaN, Infinity, -Infinity]) {
      const error = refusal(() => epochForInterval(bad, NOW));
      expect(error.field).toBe('interval');
      expect(error.message).toBe(
        `interval must be a number of seconds, a Date or a duration such as { minutes: 5 } (got ${bad})`,
      );
    }
  });

  it('refuses a performAt time that is not a finite number, whatever an untyped caller passes', () => {
    for (const bad of [Number.NaN, -Infinity, '1795942306', undefined]) {
      const error = refusal(() => epochForAt(bad as never, NOW));
      expect(error.field).toBe('at');
      expect(error.message).toBe(`at must be a Date or epoch seconds (got ${String(bad)})`);
    }
  });

  it('takes a time too far out but not in milliseconds for what it is: too far, not a unit mistake', () => {
    const error = refusal(() => epochForAt(NOW + TEN_YEARS + 1, NOW));
    expect(error.message).toMatch(/^at is more than ten years away/);
  });

  it('reads a number as milliseconds up to the ten-year edge of the milliseconds reading, inclusive', () => {
    const error = refusal(() => epochForAt((NOW + TEN_YEARS) * 1000, NOW));
    expect(error.message).toMatch(/^at is 2111518246500, an epoch in milliseconds/);
  });

  it('never takes a time within ten years for milliseconds, however early the clock', () => {
    // With the clock in 1976 a near time read as milliseconds is also "within ten years" of it:
    // only a time past the ten-year limit is ever a unit mistake.
    const early = 200_000_000;
    expect(epochForAt(early + 60, early)).toBe(early + 60);
    expect(epochForAt(early + TEN_YEARS, early)).toBe(early + TEN_YEARS);
  });

  it('refuses a duration that is not an object, and names the units an empty or unknown one may use', () => {
    for (const bad of [null, undefined, 'soon']) {
      const error = refusal(() => epochForInterval(bad as never, NOW));
      expect(error.field).toBe('interval');
      expect(error.message).toBe('interval must be a number of seconds or a duration such as { minutes: 5 }');
    }
    expect(refusal(() => epochForInterval({}, NOW)).message).toBe(
      'interval is an empty duration; give one of weeks, days, hours, minutes, seconds, ms',
    );
    expect(refusal(() => epochForInterval({ mins: 5 } as never, NOW)).message).toBe(
      'interval.mins is not a duration unit; use weeks, days, hours, minutes, seconds, ms',
    );
    for (const bad of ['5', Number.NaN, Infinity]) {
      const error = refusal(() => epochForInterval({ minutes: bad } as never, NOW));
      expect(error.field).toBe('interval.minutes');
      expect(error.message).toBe(`interval.minutes must be a finite number (got ${String(bad)})`);
    }
  });
});

describe('the milliseconds-as-seconds warning', () => {
  it('suspects a whole number of thousands from 1000 up to the absolute-epoch threshold, and nothing else', () => {
    expect(looksLikeMilliseconds(1000)).toBe(true);
    expect(looksLikeMilliseconds(60_000)).toBe(true);
    expect(looksLikeMilliseconds(ABSOLUTE_EPOCH_THRESHOLD - 1000)).toBe(true);
    expect(looksLikeMilliseconds(ABSOLUTE_EPOCH_THRESHOLD)).toBe(false); // an epoch, not an interval
    expect(looksLikeMilliseconds(0)).toBe(false);
    expect(looksLikeMilliseconds(999)).toBe(false);
    expect(looksLikeMilliseconds(1001)).toBe(false);
    expect(looksLikeMilliseconds(1500)).toBe(false);
    expect(looksLikeMilliseconds(1000.5)).toBe(false);
    expect(looksLikeMilliseconds(2000.000001)).toBe(false);
  });

  it('says how far out the seconds land in minutes below an hour, hours below two days, days above', () => {
    expect(describeSeconds(1000)).toBe('16.7 min');
    expect(describeSeconds(3599)).toBe('60.0 min');
    expect(describeSeconds(3600)).toBe('1.0 h');
    expect(describeSeconds(60_000)).toBe('16.7 h');
    expect(describeSeconds(172_799)).toBe('48.0 h');
    expect(describeSeconds(172_800)).toBe('2.0 days');
    expect(describeSeconds(3_600_000)).toBe('41.7 days');
  });
});
