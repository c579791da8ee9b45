import { WurkConfigError } from '../../src/job/errors';
import { sandboxOptionsOf, validateSandboxOptions } from '../../src/job/sandbox-options';

const WHERE = '@Worker(Render).sandbox';

function refusal(sandbox: unknown): { option: string; reason: string } {
  try {
    validateSandboxOptions(WHERE, sandbox);
  } catch (error) {
    if (error instanceof WurkConfigError) return { option: error.option, reason: error.reason };
    throw error;
  }
  throw new Error('expected a WurkConfigError');
}

describe('@Worker({ sandbox }) options', () => {
  it('accepts true, false, absent and a complete object', () => {
    for (const sandbox of [undefined, true, false, {}])
      expect(() => validateSandboxOptions(WHERE, sandbox)).not.toThrow();
    expect(() =>
      validateSandboxOptions(WHERE, {
        pool: 3,
        file: '/app/dist/render.worker.js',
        grace: 0,
        resourceLimits: { maxOldGenerationSizeMb: 256, stackSizeMb: 4 },
      }),
    ).not.toThrow();
  });

  it.each([
    ['a string', 'yes', WHERE, /must be true, false or an object/],
    ['an unknown key', { pools: 2 }, `${WHERE}.pools`, /is not a sandbox option/],
    ['pool 0', { pool: 0 }, `${WHERE}.pool`, /positive integer/],
    ['a fractional pool', { pool: 1.5 }, `${WHERE}.pool`, /positive integer/],
    ['a relative file', { file: 'render.worker' }, `${WHERE}.file`, /absolute path/],
    ['a negative grace', { grace: -1 }, `${WHERE}.grace`, /non-negative/],
    ['limits as a number', { resourceLimits: 64 }, `${WHERE}.resourceLimits`, /must be an object/],
    [
      'an unknown limit',
      { resourceLimits: { heapMb: 64 } },
      `${WHERE}.resourceLimits.heapMb`,
      /is not a resource limit/,
    ],
    ['a zero limit', { resourceLimits: { stackSizeMb: 0 } }, `${WHERE}.resourceLimits.stackSizeMb`, /positive number/],
  ])('refuses %s, naming the option', (_what, sandbox, option, reason) => {
    const refused = refusal(sandbox);
    expect(refused.option).toBe(option);
    expect(refused.reason).toMatch(reason);
  });

  it('reads true as the defaults and false as in-process', () => {
    expect(sandboxOptionsOf(true)).toEqual({});
    expect(sandboxOptionsOf(false)).toBeUndefined();
    expect(sandboxOptionsOf(undefined)).toBeUndefined();
    expect(sandboxOptionsOf({ pool: 2 })).toEqual({ pool: 2 });
  });
});
