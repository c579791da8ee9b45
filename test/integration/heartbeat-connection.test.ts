import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { RespConnection } from '../../src/server/heartbeat/resp-connection';
import { openHeartbeatConnection } from '../../src/server/heartbeat/heartbeat-connection';
import { usePrivateRedis } from '../support/private-redis';
import { TS_LOADER } from '../support/ts-loader-path';

const SERVER_DIR = join(__dirname, '..', '..', 'src', 'server', 'heartbeat');

/**
 * Loads the heartbeat loop in a fresh worker thread (as the heartbeat's own
 * thread does), opens its connection with `options`, pings, and says which
 * of ioredis's files the thread had loaded by then.
 */
function ioredisFilesInThread(options: object): Promise<{ pong: unknown; ioredisFiles: number }> {
  const code = `
    require(${JSON.stringify(TS_LOADER)});
    require(${JSON.stringify(join(SERVER_DIR, 'heartbeat-loop.ts'))});
    const { openHeartbeatConnection } = require(${JSON.stringify(join(SERVER_DIR, 'heartbeat-connection.ts'))});
    const { parentPort, workerData } = require('node:worker_threads');
    (async () => {
      const redis = await openHeartbeatConnection(workerData, 5000);
      await redis.connect();
      const pong = await redis.call(['PING']);
      await redis.close();
      const ioredisFiles = Object.keys(require.cache).filter((file) => file.includes('/node_modules/ioredis/')).length;
      parentPort.postMessage({ pong, ioredisFiles });
    })().catch((error) => parentPort.postMessage({ pong: String(error), ioredisFiles: -1 }));`;
  const thread = new Worker(code, { eval: true, workerData: options });
  return new Promise((resolve, reject) => {
    thread.once('message', (result) => {
      void thread.terminate();
      resolve(result);
    });
    thread.once('error', reject);
  });
}

/**
 * Which client the heartbeat thread beats with: the plain one where it reaches Redis as ioredis would, ioredis
 * otherwise.
 */
describe('heartbeat: its connection', () => {
  const server = usePrivateRedis();

  it('is a plain RESP connection for a redis:// URL, and works', async () => {
    const redis = await openHeartbeatConnection({ url: server.url }, 5000);
    expect(redis).toBeInstanceOf(RespConnection);
    await redis.connect();
    expect(
      await redis.transaction([
        ['SET', 'plain', '1'],
        ['GET', 'plain'],
      ]),
    ).toEqual([
      [null, 'OK'],
      [null, '1'],
    ]);
    await redis.close();
  });

  it('is ioredis for what the plain connection does not speak (here a URL with a query), and works the same', async () => {
    const redis = await openHeartbeatConnection({ url: `${server.url}/?family=4` }, 5000);
    expect(redis).not.toBeInstanceOf(RespConnection);
    await redis.connect();
    expect(
      await redis.transaction([
        ['SET', 'through-ioredis', '1'],
        ['GET', 'through-ioredis'],
      ]),
    ).toEqual([
      [null, 'OK'],
      [null, '1'],
    ]);
    expect(await redis.call(['PING'])).toBe('PONG');
    await redis.close();
  });

  it("keeps ioredis out of the heartbeat thread's isolate for a plain URL, and loads it there only when needed", async () => {
    expect(await ioredisFilesInThread({ url: server.url })).toEqual({ pong: 'PONG', ioredisFiles: 0 });
    const needed = await ioredisFilesInThread({ url: `${server.url}/?family=4` });
    expect(needed.pong).toBe('PONG');
    expect(needed.ioredisFiles).toBeGreaterThan(10);
  }, 60_000);
});
