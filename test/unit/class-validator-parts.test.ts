import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import * as classValidator from 'class-validator';
import * as parts from '../../src/config/class-validator-parts';
import { TS_LOADER } from '../support/ts-loader-path';

const ROOT = join(__dirname, '..', '..');

/** The class-validator parts wurk loads by their own files: the index's very functions, without the index's weight. */
describe('class-validator parts', () => {
  it.each([
    'Allow',
    'ValidateBy',
    'ValidateNested',
    'IsOptional',
    'ArrayMaxSize',
    'Matches',
    'getMetadataStorage',
  ] as const)('%s is the function the index exports', (name) => {
    expect(parts[name]).toBe(classValidator[name]);
  });

  it('validateSync goes through the container an app may have set with useContainer, as the index does', () => {
    const seen: unknown[] = [];
    const validator = new classValidator.Validator();
    // The app's container knows the Validator; everything else (the rules' constraint classes) falls back to
    // class-validator's.
    classValidator.useContainer(
      { get: (type: unknown) => (type === classValidator.Validator ? (seen.push(type), validator) : undefined) },
      { fallback: true },
    );
    try {
      class Shape {
        @parts.Matches(/^a/)
        name = 'b';
      }
      expect(parts.validateSync(new Shape()).map((error) => error.property)).toEqual(['name']);
      expect(seen).toEqual([classValidator.Validator]);
    } finally {
      classValidator.useContainer({ get: () => undefined }, { fallback: true });
    }
  });

  it('takes a part from the index when its file is not where this version keeps it', () => {
    expect(parts.classValidatorPart('decorator/moved/Allow', 'Allow')).toBe(classValidator.Allow);
  });

  it("wurk's entry loads neither libphonenumber-js nor all of validator.js", () => {
    const code = `require(${JSON.stringify(TS_LOADER)}); require('./src');
      const files = Object.keys(require.cache);
      console.log(JSON.stringify({ phone: files.filter((f) => f.includes('/libphonenumber-js/')).length, validator: files.filter((f) => f.includes('/node_modules/validator/')).length }));`;
    const run = spawnSync(process.execPath, ['-e', code], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    const loaded = JSON.parse(run.stdout.trim().split('\n').pop()!) as { phone: number; validator: number };
    expect(loaded.phone).toBe(0);
    // Matches needs validator's matches (and the assertString it uses); the index would load over a hundred files.
    expect(loaded.validator).toBeLessThan(5);
  }, 60_000);
});
