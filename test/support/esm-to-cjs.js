/**
 * Jest transform for the ES-module-only packages of node_modules (Nest 12).
 *
 * Jest's runtime cannot require() an ES module before Node 24.9, so these
 * files are compiled to CommonJS for the tests: `import.meta.url` becomes the
 * file's URL and `import()` a require (Jest's VM refuses dynamic imports
 * without --experimental-vm-modules). The ESM idiom
 * `const require = createRequire(import.meta.url)` is dropped: in CommonJS
 * that binding already exists, and redeclaring it makes Babel's module
 * transform read its own `require` before it is set.
 */
const babelJest = require('babel-jest').default;

const babel = babelJest.createTransformer({
  babelrc: false,
  configFile: false,
  plugins: [
    'babel-plugin-transform-import-meta',
    '@babel/plugin-transform-dynamic-import',
    '@babel/plugin-transform-modules-commonjs',
  ],
});

const ESM_REQUIRE = /^const require = createRequire\(import\.meta\.url\);$/m;

module.exports = {
  ...babel,
  process(source, path, options) {
    return babel.process(source.replace(ESM_REQUIRE, ''), path, options);
  },
  getCacheKey(source, path, options) {
    return babel.getCacheKey(source.replace(ESM_REQUIRE, ''), path, options);
  },
};
