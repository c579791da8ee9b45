// `npm run lint` (part of `npm test`): the TypeScript rules that catch what review misses,
// a promise nobody awaits or catches and code nobody uses. Layout is Prettier's (.prettierrc.json).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'dashboard/dist/',
      'docs/api/',
      'node_modules/',
      'test/mutation/incremental/',
      'test/.artifacts/',
      'coverage/',
      'reports/',
      '.stryker-tmp/',
    ],
  },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'sample/**/*.ts', 'docs/**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/no-unused-expressions': 'error',
      // A require() is a deliberate run-time load (an optional peer, a module named at run time): it says so where it stands.
      '@typescript-eslint/no-require-imports': 'error',
      // Prettier wraps code but not comments or strings: a comment stays readable in a 120-column pane.
      'max-len': [
        'error',
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true },
      ],
    },
  },
  {
    // Tests, benchmarks and examples load fixtures and child-process entries with require() on purpose.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'sample/**/*.ts', 'docs/**/*.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
