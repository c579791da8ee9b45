// Preloaded (node -r) to make the optional peers named in WURK_HIDDEN_PEERS
// unresolvable, exactly as in an app that never installed them.
const Module = require('node:module');
const hidden = new Set((process.env.WURK_HIDDEN_PEERS || '').split(',').filter(Boolean));
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const name = request.startsWith('@') ? request.split('/').slice(0, 2).join('/') : request.split('/')[0];
  if (hidden.has(name)) {
    const error = new Error(`Cannot find module '${request}'`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolve.call(this, request, ...rest);
};
