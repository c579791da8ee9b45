import { freshEachTest } from '../support/fresh-module';

// Loaded per test: the zone patterns are built at import (see fresh-module.ts).
const fresh = freshEachTest(
  () => require('../../src/periodic/cron-schedule') as typeof import('../../src/periodic/cron-schedule'),
);
const CronSchedule = {
  parse: (expression: string, timeZone?: string) => fresh.module.CronSchedule.parse(expression, timeZone),
};
const isTimeZone = (zone: string) => fresh.module.isTimeZone(zone);

const at = (iso: string) => Date.parse(iso);
const seconds = (iso: string) => at(iso) / 1000;

/** Fire times of a cron expression and the ways a zone may be written, without Redis. */
describe('periodic: cron schedule', () => {
  function refused(expression: unknown, timeZone?: string): string {
    try {
      CronSchedule.parse(expression as string, timeZone);
    } catch (error) {
      expect(error).toBeInstanceOf(fresh.module.CronSyntaxError);
      return (error as Error).message;
    }
    throw new Error(`${String(expression)} was accepted`);
  }

  it('runs in UTC unless told otherwise, and keeps the fields with their spacing tidied', () => {
    const schedule = CronSchedule.parse('  0   9 * * *  ');
    expect(schedule.expression).toBe('0 9 * * *');
    expect(schedule.timeZone).toBe('UTC');
    expect(schedule.nextSlot(at('2026-03-01T08:00:00Z'))).toBe(seconds('2026-03-01T09:00:00Z'));
  });

  it('reads the zone from the tz option, a TZ= or CRON_TZ= prefix, or a trailing zone name', () => {
    const expected = seconds('2026-03-01T08:00:00Z'); // 09:00 in Paris (winter time)
    for (const [expression, tz] of [
      ['0 9 * * *', 'Europe/Paris'],
      ['TZ=Europe/Paris 0 9 * * *', undefined],
      ['CRON_TZ=Europe/Paris 0 9 * * *', undefined],
      ['0 9 * * * Europe/Paris', undefined],
      ['0 9 * * * Europe/Paris', 'Europe/Paris'],
    ] as const) {
      const schedule = CronSchedule.parse(expression, tz);
      expect([schedule.expression, schedule.timeZone]).toEqual(['0 9 * * *', 'Europe/Paris']);
      expect(schedule.nextSlot(at('2026-03-01T00:00:00Z'))).toBe(expected);
    }
    expect(CronSchedule.parse('0 9 * * * UTC').timeZone).toBe('UTC');
    expect(CronSchedule.parse('0 9 * * * GMT').timeZone).toBe('GMT');
    expect(CronSchedule.parse('0 9 * * * America/Argentina/Buenos_Aires').timeZone).toBe(
      'America/Argentina/Buenos_Aires',
    );
  });

  it('refuses a written zone that contradicts the tz option, and a zone that does not exist', () => {
    expect(refused('TZ=Europe/Paris 0 9 * * *', 'UTC')).toBe('names the zone Europe/Paris but tz is UTC');
    expect(refused('0 9 * * * Europe/Paris', 'Asia/Tokyo')).toBe('names the zone Europe/Paris but tz is Asia/Tokyo');
    expect(refused('0 9 * * *', 'Mars/Olympus')).toBe('has an unknown IANA time zone: Mars/Olympus');
    expect(refused('TZ=Mars/Olympus 0 9 * * *')).toBe('has an unknown IANA time zone: Mars/Olympus');
  });

  it('refuses an empty expression, one that is not a string, bad fields and more than six fields', () => {
    for (const empty of ['', '   ', undefined, 42]) expect(refused(empty)).toBe('must be a non-empty cron string');
    expect(refused('61 * * * *')).toMatch(/^is not a valid cron expression \(.+\)$/);
    expect(refused('0 0 9 * * * 2026')).toBe(
      'has more than 6 fields (seconds minutes hours day-of-month month day-of-week)',
    );
  });

  it('takes a leading seconds field and the @ aliases', () => {
    expect(CronSchedule.parse('30 0 9 * * *').nextSlot(at('2026-03-01T09:00:00Z'))).toBe(
      seconds('2026-03-01T09:00:30Z'),
    );
    expect(CronSchedule.parse('@hourly').nextSlot(at('2026-03-01T09:10:00Z'))).toBe(seconds('2026-03-01T10:00:00Z'));
  });

  it('the previous slot includes a fire time exactly at now; the next one is strictly after', () => {
    const schedule = CronSchedule.parse('*/5 * * * *');
    expect(schedule.previousSlot(at('2026-03-01T09:05:00Z'))).toBe(seconds('2026-03-01T09:05:00Z'));
    expect(schedule.previousSlot(at('2026-03-01T09:04:59.999Z'))).toBe(seconds('2026-03-01T09:00:00Z'));
    expect(schedule.previousSlot(at('2026-03-01T09:05:00Z') + 0.5)).toBe(seconds('2026-03-01T09:05:00Z'));
    expect(schedule.nextSlot(at('2026-03-01T09:05:00Z'))).toBe(seconds('2026-03-01T09:10:00Z'));
    expect(schedule.nextSlot(at('2026-03-01T09:04:59.999Z'))).toBe(seconds('2026-03-01T09:05:00Z'));
  });

  it('knows an IANA zone from a made-up one', () => {
    expect(isTimeZone('Europe/Paris')).toBe(true);
    expect(isTimeZone('Europe/Atlantis')).toBe(false);
  });
});
