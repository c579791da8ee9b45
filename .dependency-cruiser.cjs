/**
 * The layer rule of docs/internals/architecture.md, checked by `npm run lint:deps` (part of `npm test`).
 *
 * Each top-level folder of src/ has a rank; an import may only point to a
 * lower rank. Folders of one rank do not import each other (the planes talk
 * through ports, the features never reach into one another), so no folder
 * cycle can form, and no file-level cycle is allowed either. Type-only
 * imports count: a type that points up is still an upward arrow.
 * There are no exceptions; a new folder must be given a rank here first.
 */
const LAYERS = [
  // rank 0, the base: imports nothing of ours.
  ['job', 'redis'],
  // rank 1: the module options, their rules and validation (uses job/ errors and types).
  ['config'],
  // rank 2, the planes.
  ['client', 'server', 'limiter'],
  // rank 3, the features.
  ['status', 'periodic', 'unique', 'collapse', 'observability', 'history', 'encryption', 'batch', 'iterable', 'flow'],
  // rank 4: the operator's reads and actions, over the records of every feature (status rows, attempts, locks).
  ['admin'],
  // rank 5: the in-memory fakes for tests stand in for the planes and features below.
  ['testing'],
  // rank 6: the HTTP contract without Nest.
  ['api'],
  // rank 7: the Nest layer.
  ['nest'],
  // rank 8, the package entries: src/index.ts and src/entries/.
  ['entries', 'index.ts'],
];

const folder = (name) => (name.endsWith('.ts') ? `^src/${name.replace('.', '\\.')}$` : `^src/${name}/`);

/** For each folder: no import of a folder of its own rank or above, other than itself. */
const layerRules = LAYERS.flatMap((names, rank) =>
  names.map((name) => ({
    name: `layer-${name.replace('.ts', '')}`,
    comment: `src/${name} (rank ${rank}) may import only folders of lower ranks: ${LAYERS.slice(0, rank).flat().join(', ') || 'none'}`,
    severity: 'error',
    from: { path: folder(name) },
    // Anything in src/ that is neither itself nor below it, unranked folders included.
    to: { path: '^src/', pathNot: [name, ...LAYERS.slice(0, rank).flat()].map(folder) },
  })),
);

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-circular',
      comment: 'A file-level import cycle: break it with a port or by moving what both need down.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'unranked-folder',
      comment:
        'Every top-level folder of src/ has a rank in .dependency-cruiser.cjs (test/docs/architecture.test.ts checks folders without imports).',
      severity: 'error',
      from: { path: '^src/', pathNot: LAYERS.flat().map(folder) },
      to: { path: '^src/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '\\.test\\.ts$' },
  },
};
