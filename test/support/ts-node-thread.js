// Preloaded by a heartbeat thread started from TypeScript source under Jest (heartbeat-from-source.ts):
// type-checking is the test run's job, the thread only needs the code transpiled.
const { join } = require('node:path');

require('ts-node').register({ transpileOnly: true, projectSearchDir: join(__dirname, '..', '..') });
