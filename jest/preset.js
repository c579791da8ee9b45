/**
 * `preset: 'nestjs-wurk'`: Jest for a Nest 12 app that uses wurk. `.ts`
 * files and Nest's ES-module-only packages go through
 * `nestjs-wurk/jest-transform` (TypeScript to CommonJS, see that file);
 * everything else in node_modules is left as it is. Extend it in your
 * jest.config.js (`transformIgnorePatterns` to add an ESM-only package of
 * your own, `testMatch`, `setupFiles`…).
 */
'use strict';
const transform = require.resolve('./transform.js');

module.exports = {
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  testMatch: ['**/*.spec.ts', '**/*.test.ts', '**/*.e2e-spec.ts'],
  transform: { '^.+\\.(ts|m?js)$': transform },
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/)'],
};
