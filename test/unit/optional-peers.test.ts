import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { TS_LOADER } from '../support/ts-loader-path';

const root = join(__dirname, '..', '..');
const PEERS = ['@nestjs/terminus', 'prom-client', '@opentelemetry/api', '@nestjs/swagger'];

/**
 * Runs `script` in a fresh Node with the optional peers unresolvable, the package's TypeScript loaded through the
 * tests' loader.
 */
function withoutPeers(script: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(
    process.execPath,
    ['-r', TS_LOADER, '-r', join(__dirname, '..', 'support', 'hide-peers.js'), '-e', script],
    {
      cwd: root,
      env: { ...process.env, WURK_HIDDEN_PEERS: PEERS.join(',') },
      encoding: 'utf8',
      timeout: 60000,
    },
  );
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('optional peers', () => {
  it('the root, testing, worker, admin and internals entries load without any of them; each integration names the one it needs', () => {
    const result = withoutPeers(`
      for (const peer of ${JSON.stringify(PEERS)}) {
        try { require(peer); console.log('visible ' + peer); } catch {}
      }
      const root = require('./src');
      if (typeof root.WurkModule !== 'function' || typeof root.ClientService !== 'function') throw new Error('root entry incomplete');
      require('./src/entries/testing');
      require('./src/entries/worker');
      if (typeof require('./src/entries/admin').WurkAdmin !== 'function') throw new Error('admin entry incomplete');
      if (typeof require('./src/entries/internals').Manager !== 'function') throw new Error('internals entry incomplete');
      for (const entry of ['health', 'metrics', 'tracing']) {
        try { require('./src/entries/' + entry); console.log('loaded ' + entry); }
        catch (error) { console.log(entry + ': ' + error.name + ': ' + error.message); }
      }
    `);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([
      'health: MissingPeerError: nestjs-wurk/health needs the optional peer dependency @nestjs/terminus: npm install @nestjs/terminus',
      'metrics: MissingPeerError: nestjs-wurk/metrics needs the optional peer dependency prom-client: npm install prom-client',
      'tracing: MissingPeerError: nestjs-wurk/tracing needs the optional peer dependency @opentelemetry/api: npm install @opentelemetry/api',
    ]);
  });
});
