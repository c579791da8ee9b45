// Stryker over the folders that decide a job's fate, one folder a run (`npm run mutate:ts` runs them all):
// each folder keeps its own incremental file, because a run rewrites its file with the mutants of that run
// only, and one shared file would forget every folder but the last.
const FOLDERS = ['server', 'periodic', 'status', 'api', 'client', 'job'];
const folder = process.env.WURK_MUTATE_FOLDER;
if (!FOLDERS.includes(folder)) {
  throw new Error(`WURK_MUTATE_FOLDER must be one of ${FOLDERS.join(', ')} (got ${folder ?? 'nothing'}); npm run mutate:ts sets it`);
}

export default {
  $schema: './node_modules/@stryker-mutator/core/schema/stryker-schema.json',
  packageManager: 'npm',
  testRunner: 'jest',
  jest: { projectType: 'custom', configFile: 'test/mutation/stryker.jest.config.js', enableFindRelatedTests: true },
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  coverageAnalysis: 'perTest',
  mutate: [`src/${folder}/**/*.ts`],
  ignoreStatic: true,
  incremental: true,
  incrementalFile: `test/mutation/incremental/${folder}.json`,
  concurrency: Number(process.env.WURK_MUTATE_CONCURRENCY ?? 1),
  timeoutMS: 20000,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: `reports/mutation/${folder}.json` },
  tempDirName: `.stryker-tmp/${folder}`,
  thresholds: { high: 85, low: 70, break: null },
};
