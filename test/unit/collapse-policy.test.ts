import { collapsePolicyOf, parseCollapse } from '../../src/job/collapse-policy';
import { InvalidJobError, WurkConfigError } from '../../src/job/errors';
import { JobPayload } from '../../src/job/payload';
import { validateWorkerOptions } from '../../src/job/worker-definition';

/** Ruby Wurk's `collapse:` rules: the policy's own keys, positive bounded seconds, whole-second slots. */
describe('parseCollapse', () => {
  const refusal = (declared: unknown): InvalidJobError => {
    try {
      parseCollapse(declared);
    } catch (error) {
      if (error instanceof InvalidJobError) return error;
      throw error;
    }
    throw new Error('accepted');
  };

  it('reads each policy, and absent or null as none', () => {
    expect(parseCollapse(undefined)).toBeUndefined();
    expect(parseCollapse(null)).toBeUndefined();
    expect(parseCollapse({ policy: 'debounce', wait: 0.5 })).toEqual({ policy: 'debounce', wait: 0.5 });
    expect(parseCollapse({ wait: 5, max_wait: 5, policy: 'debounce' })).toEqual({
      policy: 'debounce',
      wait: 5,
      max_wait: 5,
    });
    expect(parseCollapse({ policy: 'throttle', slot: 60 })).toEqual({ policy: 'throttle', slot: 60 });
    expect(parseCollapse({ policy: 'throttle', slot: 315_576_000 })).toEqual({ policy: 'throttle', slot: 315_576_000 });
  });

  it.each([
    ['debounce', 'collapse', "must be an object naming a policy, e.g. { policy: 'debounce', wait: 5 }"],
    [
      [{ policy: 'debounce', wait: 5 }],
      'collapse',
      "must be an object naming a policy, e.g. { policy: 'debounce', wait: 5 }",
    ],
    [false, 'collapse', "must be an object naming a policy, e.g. { policy: 'debounce', wait: 5 }"],
    [{ wait: 5 }, 'collapse.policy', "must be 'debounce' or 'throttle'"],
    [{ policy: 'unique', wait: 5 }, 'collapse.policy', "must be 'debounce' or 'throttle'"],
    [{ policy: 'debounce' }, 'collapse.wait', 'is required by the debounce policy'],
    [{ policy: 'debounce', slot: 5 }, 'collapse.wait', 'is required by the debounce policy'],
    [
      { policy: 'debounce', wait: 5, slot: 5 },
      'collapse.slot',
      'is not an option of the debounce policy (it takes wait, max_wait)',
    ],
    [
      { policy: 'throttle', slot: 5, wait: 1 },
      'collapse.wait',
      'is not an option of the throttle policy (it takes slot)',
    ],
    [
      { policy: 'debounce', wait: 0 },
      'collapse.wait',
      'must be a positive number of seconds up to 315576000 (ten years)',
    ],
    [
      { policy: 'debounce', wait: '5' },
      'collapse.wait',
      'must be a positive number of seconds up to 315576000 (ten years)',
    ],
    [
      { policy: 'debounce', wait: Infinity },
      'collapse.wait',
      'must be a positive number of seconds up to 315576000 (ten years)',
    ],
    [
      { policy: 'debounce', wait: 315_576_001 },
      'collapse.wait',
      'must be a positive number of seconds up to 315576000 (ten years)',
    ],
    [
      { policy: 'debounce', wait: 5, max_wait: -1 },
      'collapse.max_wait',
      'must be a positive number of seconds up to 315576000 (ten years)',
    ],
    [{ policy: 'debounce', wait: 60, max_wait: 59 }, 'collapse.max_wait', 'must be at least wait (60)'],
    [
      { policy: 'throttle', slot: 0.5 },
      'collapse.slot',
      'must be a whole number of seconds, a positive number of seconds up to 315576000 (ten years)',
    ],
    [
      { policy: 'throttle', slot: -60 },
      'collapse.slot',
      'must be a whole number of seconds, a positive number of seconds up to 315576000 (ten years)',
    ],
  ])('refuses %p, naming %s', (declared, field, reason) => {
    const error = refusal(declared);
    expect(error.field).toBe(field);
    expect(error.reason).toBe(reason);
  });
});

describe('collapsePolicyOf (the company a policy may not keep)', () => {
  const payload = (members: Record<string, unknown>) =>
    JobPayload.fromEntries(Object.entries({ class: 'C', queue: 'q', args: [], ...members }));
  const debounce = { policy: 'debounce', wait: 5 };
  const throttle = { policy: 'throttle', slot: 5 };

  it('reads the payload, and a job without collapse as none', () => {
    expect(collapsePolicyOf(payload({}))).toBeUndefined();
    expect(collapsePolicyOf(payload({ collapse: throttle, at: 1e10, unique_for: false, encrypt: false }))).toEqual(
      throttle,
    );
  });

  it.each([
    [{ collapse: throttle, unique_for: 60 }, 'cannot be combined with unique_for: keep one of the two'],
    [{ collapse: debounce, unique_for: 60 }, 'cannot be combined with unique_for: keep one of the two'],
    [{ collapse: throttle, encrypt: true }, 'cannot be combined with encrypt'],
    [
      { collapse: debounce, at: 1e10 },
      'debounce owns the run time: it cannot be combined with at (performIn/performAt); use wait and max_wait',
    ],
    [{ collapse: debounce, bid: 'b-1' }, 'debounce cannot be pushed inside a batch (bid)'],
  ])('refuses %p, naming collapse', (members, reason) => {
    expect(() => collapsePolicyOf(payload(members))).toThrow(new InvalidJobError('collapse', reason));
  });
});

describe('@Worker collapse', () => {
  const configError = (options: Record<string, unknown>): WurkConfigError => {
    try {
      validateWorkerOptions('W', options as never);
    } catch (error) {
      if (error instanceof WurkConfigError) return error;
      throw error;
    }
    throw new Error('accepted');
  };

  it('accepts each policy', () => {
    expect(() => validateWorkerOptions('W', { collapse: { policy: 'debounce', wait: 5, max_wait: 60 } })).not.toThrow();
    expect(() => validateWorkerOptions('W', { collapse: { policy: 'throttle', slot: 60 } })).not.toThrow();
  });

  it.each([
    [{ collapse: { policy: 'debounce', wait: -1 } }, 'collapse.wait'],
    [{ collapse: { policy: 'throttle' } }, 'collapse.slot'],
    [{ collapse: 'throttle' }, 'collapse'],
    [{ collapse: { policy: 'throttle', slot: 5 }, uniqueFor: 60 }, 'collapse'],
    [{ collapse: { policy: 'throttle', slot: 5 }, encrypt: true }, 'collapse'],
    [{ collapse: { policy: 'throttle', slot: 5 }, custom: { encrypt: true } }, 'custom.encrypt'],
    [{ custom: { collapse: { policy: 'throttle', slot: 5 } } }, 'custom.collapse'],
  ])('refuses %p at start-up, naming @Worker(W).%s', (options, option) => {
    expect(configError(options).option).toBe(`@Worker(W).${option}`);
  });
});
