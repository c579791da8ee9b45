/**
 * The tests' TypeScript loader for code that runs outside Jest's module registry: worker threads started from source
 * (the heartbeat's, a sandbox's: heartbeat-from-source.ts names it) and child processes (`node -r <this file> x.ts`).
 *
 * Each `.ts` file is transpiled (no type check: that is the test run's job) once per content and kept on disk, so a
 * thread or process whose sources were seen before loads no compiler at all. Loading TypeScript and ts-node in each
 * cost about 1.4 s of CPU a thread, and the suite starts hundreds of them. The cache key holds the file's path and text,
 * the compiler options and TypeScript's version: a changed file (an edit, a Stryker mutant) is transpiled afresh.
 */
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const Module = require('node:module');
const { join } = require('node:path');
const { threadId } = require('node:worker_threads');

const ROOT = join(__dirname, '..', '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'wurk-thread-ts');
const TSCONFIG = readFileSync(join(ROOT, 'tsconfig.json'), 'utf8');
const TS_VERSION = require('typescript/package.json').version;

let compilerOptions;

/** TypeScript is loaded only on a cache miss. */
function transpile(source, filename) {
  const ts = require('typescript');
  compilerOptions ??= {
    ...ts.convertCompilerOptionsFromJson(JSON.parse(TSCONFIG).compilerOptions, ROOT).options,
    sourceMap: false,
    inlineSourceMap: true,
    inlineSources: true,
    declaration: false,
  };
  return ts.transpileModule(source, { compilerOptions, fileName: filename }).outputText;
}

function compiled(source, filename) {
  const key = createHash('sha1').update(`${TS_VERSION}\0${TSCONFIG}\0${filename}\0`).update(source).digest('hex');
  const file = join(CACHE, `${key}.js`);
  try {
    return readFileSync(file, 'utf8');
  } catch {
    const code = transpile(source, filename);
    mkdirSync(CACHE, { recursive: true });
    // Threads of several Jest workers may write one entry at once: each writes its own file and renames it in place.
    const partial = `${file}.${process.pid}-${threadId}.tmp`;
    writeFileSync(partial, code);
    renameSync(partial, file);
    return code;
  }
}

// Stack traces name the TypeScript lines, as ts-node's did.
process.setSourceMapsEnabled(true);

Module._extensions['.ts'] = function loadTypeScript(module, filename) {
  module._compile(compiled(readFileSync(filename, 'utf8'), filename), filename);
};
