import { join } from 'node:path';

/** The tests' TypeScript loader (ts-loader.js), for `node -r` in a child process or a `require` in a thread's code. */
export const TS_LOADER = join(__dirname, 'ts-loader.js');
