/**
 * `nestjs-wurk/jest-transform`: Jest on Nest 12 without Babel or ts-jest.
 *
 * Nest 12's packages (@nestjs/common, core, testing…) ship as ES modules
 * only, and Jest's runtime cannot require() an ES module (before Node 24.9,
 * and not without --experimental-vm-modules). This transform compiles both
 * the app's TypeScript and those ES modules to CommonJS with the
 * `typescript` package the app already has (one file at a time, as
 * ts-jest's isolatedModules does: no type check, run `tsc --noEmit` for
 * that), keeping decorator metadata so Nest's DI works. Its only
 * requirement is `typescript` >= 5, so it installs beside Jest 29 or 30 and
 * TypeScript 5 or 6 without a peer conflict.
 *
 * ES-module idioms CommonJS lacks are rewritten first: `import.meta.url`,
 * `.dirname`, `.filename` and `.resolve()` from the file's own path, and the
 * `const require = createRequire(import.meta.url)` line is dropped (the
 * binding exists in CommonJS, and redeclaring it is a SyntaxError).
 */
'use strict';
const { createHash } = require('node:crypto');

let ts;
function typescript() {
  if (ts) return ts;
  try {
    ts = require('typescript');
  } catch {
    throw new Error('nestjs-wurk/jest-transform needs the `typescript` package (npm install -D typescript)');
  }
  return ts;
}

const ESM_REQUIRE = /^(?:const|let|var) require = createRequire\(import\.meta\.url\);?$/gm;
const FILE_URL = "require('node:url').pathToFileURL(__filename).href";

/** The ES-module-only expressions, spelled with what a CommonJS module has. */
function withoutImportMeta(source) {
  if (!source.includes('import.meta')) return source;
  return source
    .replace(ESM_REQUIRE, '')
    .replace(/import\.meta\.url/g, FILE_URL)
    .replace(/import\.meta\.dirname/g, '__dirname')
    .replace(/import\.meta\.filename/g, '__filename')
    .replace(
      /import\.meta\.resolve/g,
      "((specifier) => require('node:url').pathToFileURL(require.resolve(specifier)).href)",
    )
    .replace(/import\.meta/g, `({ url: ${FILE_URL}, dirname: __dirname, filename: __filename })`);
}

const COMPILER_OPTIONS = {
  module: 'CommonJS',
  target: 'ES2022',
  allowJs: true,
  esModuleInterop: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  sourceMap: true,
  inlineSources: true,
  // A class field must not shadow what a decorator or a base constructor set (Nest's and TypeScript's legacy semantics).
  useDefineForClassFields: false,
};

function process(source, path) {
  const ts = typescript();
  const { options } = ts.convertCompilerOptionsFromJson(COMPILER_OPTIONS, '');
  const output = ts.transpileModule(withoutImportMeta(source), {
    compilerOptions: options,
    fileName: path,
    reportDiagnostics: false,
  });
  return { code: output.outputText, map: output.sourceMapText };
}

function getCacheKey(source, path) {
  return createHash('sha1')
    .update(`nestjs-wurk-jest-transform 1 ${typescript().version}\0${path}\0`)
    .update(source)
    .digest('hex');
}

module.exports = { process, getCacheKey, canInstrument: false };
