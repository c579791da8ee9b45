import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Starts a throwaway redis-server on a free loopback port, so the sample runs
 * on a machine with no Redis configured. Returns its URL; the server exits
 * with the sample (`exit`), or when the caller stops it after a signal.
 */
export async function startPrivateRedis(): Promise<{ url: string; stop: () => void }> {
  const port = await new Promise<number>((resolve, reject) => {
    const probe = createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as { port: number };
      probe.close(() => resolve(free));
    });
  });
  const dir = mkdtempSync(join(tmpdir(), 'wurk-sample-'));
  const server = spawn(
    process.env.REDIS_SERVER || 'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  server.on('error', (error) => {
    console.error(
      `could not start redis-server (${error.message}); install it (apt-get install redis-server) or set REDIS_URL`,
    );
    process.exit(1);
  });
  process.once('exit', () => server.kill());
  await new Promise<void>((resolve) => {
    server.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('Ready to accept connections')) resolve();
    });
  });
  return { url: `redis://127.0.0.1:${port}`, stop: () => server.kill() };
}
