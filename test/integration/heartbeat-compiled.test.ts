import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { heartbeatThreadEntry } from '../../src/server/heartbeat/heartbeat';
import type * as HeartbeatModule from '../../src/server/heartbeat/heartbeat';
import { newProcessIdentity } from '../../src/server/identity';
import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';

const ROOT = join(__dirname, '..', '..');

/**
 * The published package runs from dist/, where no ts-node exists: the
 * heartbeat must find its compiled thread entry beside itself. This compiles
 * the heartbeat as `npm run build` does (inside node_modules, so the build
 * resolves ioredis like an installed package) and runs it.
 */
describe('Heartbeat compiled to JavaScript', () => {
  const server = usePrivateRedis();
  let out: string;
  let compiled: typeof HeartbeatModule;

  beforeAll(async () => {
    const cache = join(ROOT, 'node_modules', '.cache');
    mkdirSync(cache, { recursive: true });
    out = mkdtempSync(join(cache, 'wurk-heartbeat-'));
    const config = join(out, 'tsconfig.json');
    writeFileSync(
      config,
      JSON.stringify({
        extends: join(ROOT, 'tsconfig.build.json'),
        compilerOptions: {
          rootDir: join(ROOT, 'src'),
          outDir: join(out, 'dist'),
          declaration: false,
          sourceMap: false,
        },
        files: [
          join(ROOT, 'src', 'server', 'heartbeat', 'heartbeat.ts'),
          join(ROOT, 'src', 'server', 'heartbeat', 'heartbeat-thread.ts'),
        ],
        include: [],
      }),
    );
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', config], { stdio: 'pipe' });
    compiled = require(join(out, 'dist', 'server', 'heartbeat', 'heartbeat.js')) as typeof HeartbeatModule;
  });

  afterAll(async () => {
    rmSync(out, { recursive: true, force: true });
  });

  it('loads the .ts entry through a TypeScript loader from source, and the .js entry with no loader from the build', () => {
    expect(heartbeatThreadEntry()).toEqual({
      file: join(ROOT, 'src', 'server', 'heartbeat', 'heartbeat-thread.ts'),
      compiled: false,
    });
    const entry = compiled.heartbeatThreadEntry();
    // Node loaded the build by its real path: node_modules may be a symlink (a worktree's, Stryker's sandbox).
    expect(entry).toEqual({
      file: join(realpathSync(out), 'dist', 'server', 'heartbeat', 'heartbeat-thread.js'),
      compiled: true,
    });
    expect(existsSync(entry.file)).toBe(true);
  });

  it('leaves the TypeScript loader to the host: no file of src/ loads ts-node (the test setup preloads its own)', () => {
    const sources = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((file) =>
      file.endsWith('.ts'),
    );
    expect(sources.length).toBeGreaterThan(100);
    expect(
      sources.filter((file) =>
        /require\(['"]ts-node|from ['"]ts-node/.test(readFileSync(join(ROOT, 'src', file), 'utf8')),
      ),
    ).toEqual([]);
  });

  it('beats and leaves from the compiled thread', async () => {
    const identity = newProcessIdentity();
    const heartbeat = new compiled.Heartbeat({
      redis: { url: server.url },
      identity,
      info: {
        tag: '',
        labels: [],
        concurrency: 2,
        queues: ['default'],
        weights: [{ default: 0 }],
        version: '0.1.0',
        startedAt: Date.now() / 1000,
      },
      interval: 0.2,
      ttl: 60,
    });
    const redis = server.client();
    try {
      await heartbeat.start();
      expect(await redis.sismember(Keys.processes, identity.identity)).toBe(1);
      expect(await redis.hget(identity.identity, 'concurrency')).toBe('2');
    } finally {
      await heartbeat.stop();
    }
    expect(await redis.sismember(Keys.processes, identity.identity)).toBe(0);
  });
});
