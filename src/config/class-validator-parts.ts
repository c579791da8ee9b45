/**
 * The few parts of class-validator wurk uses, loaded by their own files.
 * The package's index loads every decorator it has, and with them
 * validator.js whole and libphonenumber-js's metadata: about 8 MB of a
 * worker's RSS and 3 MB of its heap (measured after a full GC) for rules
 * wurk never applies. The parts are the very modules the index re-exports
 * (one metadata storage, one container), so decorators and checks behave
 * exactly as through the index; should a class-validator release move a
 * file, the part is taken from the index instead.
 */
import type * as ClassValidator from 'class-validator';

export function classValidatorPart<Name extends keyof typeof ClassValidator>(
  file: string,
  name: Name,
): (typeof ClassValidator)[Name] {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const loaded = require(`class-validator/cjs/${file}`) as Partial<typeof ClassValidator>;
    if (loaded[name] !== undefined) return loaded[name] as (typeof ClassValidator)[Name];
  } catch {
    // Not where 0.14 and 0.15 keep it: the index has it.
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('class-validator') as typeof ClassValidator)[name];
}

export const Allow = classValidatorPart('decorator/common/Allow', 'Allow');
export const ValidateBy = classValidatorPart('decorator/common/ValidateBy', 'ValidateBy');
export const ValidateNested = classValidatorPart('decorator/common/ValidateNested', 'ValidateNested');
export const IsOptional = classValidatorPart('decorator/common/IsOptional', 'IsOptional');
export const ArrayMaxSize = classValidatorPart('decorator/array/ArrayMaxSize', 'ArrayMaxSize');
export const Matches = classValidatorPart('decorator/string/Matches', 'Matches');
export const getMetadataStorage = classValidatorPart('metadata/MetadataStorage', 'getMetadataStorage');
const getFromContainer = classValidatorPart('container', 'getFromContainer');
const Validator = classValidatorPart('validation/Validator', 'Validator');

export type { ValidationError, ValidatorOptions } from 'class-validator';

/**
 * class-validator's own validateSync (index.ts): the Validator from its container, which an app may have replaced with
 * useContainer.
 */
export function validateSync(
  object: object,
  options?: ClassValidator.ValidatorOptions,
): ClassValidator.ValidationError[] {
  return getFromContainer(Validator).validateSync(object, options);
}
