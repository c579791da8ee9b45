import { InvalidJobError } from '../../src/job/errors';
import { epochForAt, epochForInterval, InvalidScheduleError } from '../../src/client/schedule-time';
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
    expect(error.message).toMatch(/epoch in milliseconds \(read as seconds it is the year 58,\d{3}\).*pass 1795942306\.5, a Date/);
    expect(refusal(() => epochForInterval((NOW + 60) * 1000, NOW)).message).toMatch(/epoch in milliseconds/);
  });

  it('refuses anything more than ten years away', () => {
    expect(epochForInterval(9 * 365 * DAY, NOW)).toBe(NOW + 9 * 365 * DAY);
    expect(refusal(() => epochForInterval(11 * 365 * DAY, NOW)).message).toMatch(/more than ten years away/);
    expect(refusal(() => epochForInterval({ weeks: 600 }, NOW)).message).toMatch(/more than ten years away/);
    expect(refusal(() => epochForAt(new Date((NOW + 11 * 365 * DAY) * 1000), NOW)).message).toMatch(/more than ten years away/);
  });

  it('refuses a malformed duration, naming the unit', () => {
    expect(refusal(() => epochForInterval({ mins: 5 } as never, NOW)).field).toBe('interval.mins');
    expect(refusal(() => epochForInterval({}, NOW)).field).toBe('interval');
    expect(refusal(() => epochForInterval(Number.NaN, NOW)).field).toBe('interval');
    expect(refusal(() => epochForAt(new Date('nope'), NOW)).message).toMatch(/Invalid Date/);
  });
});
