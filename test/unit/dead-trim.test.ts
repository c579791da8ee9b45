import { deadTrimArgs } from '../../src/server/fetch/dead-trim';
import { invalidPayloadArgs } from '../../src/server/fetch/invalid-bytes';

const NOW = 1_795_933_789_500;

/** What the scripts that add to dead are told: the cutoff score, the size limit, and the new entry's times. */
describe('fetch: dead trim and invalid-payload arguments', () => {
  it("trims entries older than `timeout` seconds and keeps at most maxJobs, Sidekiq's DeadSet rules", () => {
    expect(deadTrimArgs({ timeout: 3600, maxJobs: 10_000 }, NOW)).toEqual(['1795930189.5', 10_000]);
  });

  it('files an invalid payload scored now, with failed_at in the configured dialect (seconds by default)', () => {
    const dead = { timeout: 60, maxJobs: 5 };
    const logger = { log: () => undefined, warn: () => undefined, error: () => undefined };
    expect(invalidPayloadArgs({ dead, logger }, NOW)).toEqual(['1795933729.5', 5, '1795933789.5', '1795933789.5']);
    expect(invalidPayloadArgs({ dead, logger, timestamps: 'millis' }, NOW)).toEqual([
      '1795933729.5',
      5,
      '1795933789.5',
      '1795933789500',
    ]);
  });

  it('reads the clock when not given a time', () => {
    const [cutoff] = deadTrimArgs({ timeout: 0, maxJobs: 1 });
    expect(Math.abs(Number(cutoff) - Date.now() / 1000)).toBeLessThan(5);
  });
});
