import { InvalidJobError, InvalidPayloadError, WurkConfigError, WurkError } from '../../src/job/errors';

describe('wurk errors', () => {
  it('carry their own class name, a message naming the field or option, and the parts apart', () => {
    const job = new InvalidJobError('args[1].when', 'is a Date');
    expect([job.name, job.message, job.field, job.reason]).toEqual([
      'InvalidJobError',
      'args[1].when is a Date',
      'args[1].when',
      'is a Date',
    ]);
    const config = new WurkConfigError('concurrency', 'must be a positive integer');
    expect([config.name, config.message, config.option, config.reason]).toEqual([
      'WurkConfigError',
      'wurk option concurrency must be a positive integer',
      'concurrency',
      'must be a positive integer',
    ]);
    const payload = new InvalidPayloadError('not a JSON object');
    expect([payload.name, payload.message]).toEqual(['InvalidPayloadError', 'invalid job payload: not a JSON object']);
  });

  it('are all WurkErrors, so a caller can tell wurk refusals from other failures', () => {
    for (const error of [new InvalidJobError('a', 'b'), new WurkConfigError('a', 'b'), new InvalidPayloadError('b')]) {
      expect(error).toBeInstanceOf(WurkError);
      expect(error).toBeInstanceOf(Error);
    }
    expect(new WurkError('plain').name).toBe('WurkError');
  });
});
