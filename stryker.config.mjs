// Stryker over the code that decides a job's fate, one unit a run (`npm run mutate:ts` runs them all): each
// unit keeps its own incremental file, because a run rewrites its file with the mutants of that run only,
// and the big folders are split in units (test/mutation/stryker-units.json) so that each run fits in a
// working session on 2 cores and its results are kept even when a later unit is cut short; a unit cut short
// itself keeps the mutants it decided (test/mutation/checkpoint-reporter.mjs) and its next run tests the rest.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const UNITS = JSON.parse(readFileSync(new URL('./test/mutation/stryker-units.json', import.meta.url), 'utf8'));
const unit = process.env.WURK_MUTATE_UNIT;
if (!(unit in UNITS)) {
  throw new Error(
    `WURK_MUTATE_UNIT must be one of ${Object.keys(UNITS).join(', ')} (got ${unit ?? 'nothing'}); npm run mutate:ts sets it`,
  );
}

export default {
  $schema: './node_modules/@stryker-mutator/core/schema/stryker-schema.json',
  packageManager: 'npm',
  testRunner: 'jest',
  jest: { projectType: 'custom', configFile: 'test/mutation/stryker.jest.config.js', enableFindRelatedTests: true },
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  coverageAnalysis: 'perTest',
  mutate: UNITS[unit],
  ignoreStatic: true,
  incremental: true,
  incrementalFile: `test/mutation/incremental/${unit}.json`,
  concurrency: Number(process.env.WURK_MUTATE_CONCURRENCY ?? 1),
  timeoutMS: 20000,
  // The initial run is the whole Jest config once; on a loaded 2-core machine it outlasts Stryker's 5 min default.
  dryRunTimeoutMinutes: 30,
  // wurk-checkpoint saves the mutants decided so far every minute, so a unit cut short resumes where it stopped.
  plugins: ['@stryker-mutator/*', fileURLToPath(new URL('./test/mutation/checkpoint-reporter.mjs', import.meta.url))],
  reporters: ['clear-text', 'progress', 'json', 'wurk-checkpoint'],
  jsonReporter: { fileName: `reports/mutation/${unit}.json` },
  tempDirName: `.stryker-tmp/${unit}`,
  thresholds: { high: 85, low: 70, break: null },
};
