import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';

/** The redis-server binary: `REDIS_SERVER`, else the one on PATH. */
export function redisServerBinary(): string {
  return process.env.REDIS_SERVER || 'redis-server';
}

export function assertRedisServerInstalled(): void {
  const probe = spawnSync(redisServerBinary(), ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `redis-server not found (tried "${redisServerBinary()}"). The tests start their own private redis-server; ` +
        'install it (Debian/Ubuntu: `sudo apt-get install -y redis-server`, macOS: `brew install redis`) ' +
        'or point REDIS_SERVER at the binary.',
    );
  }
}

/** A port nobody listens on right now (never 6379 by construction: the OS picks). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });
}

export interface RedisServerOptions {
  /** appendonly with appendfsync always, for restart tests that must not lose writes. */
  durable?: boolean;
  extraArgs?: string[];
}

/**
 * A private redis-server on a free loopback port with its own data dir.
 * Each test file starts its own, so suites never share state and chaos tests
 * can stop and restart it.
 */
export class RedisServer {
  private process?: ChildProcess;
  private readonly clients: Redis[] = [];
  private admin?: Redis;
  /** Chosen at the first boot and kept across restarts, so clients reconnect to the same server. */
  private chosenPort?: number;
  readonly dir = mkdtempSync(join(tmpdir(), 'wurk-redis-'));

  constructor(private readonly options: RedisServerOptions = {}) {}

  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    const server = new RedisServer(options);
    await server.boot();
    return server;
  }

  get port(): number {
    if (this.chosenPort === undefined) throw new Error('the redis-server has not been booted yet');
    return this.chosenPort;
  }

  /** One shared client for assertions, made on first use. */
  get redis(): Redis {
    this.admin ??= this.client();
    return this.admin;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** A plain ioredis client for assertions; closed by stop(). */
  client(): Redis {
    const client = new Redis(this.port, '127.0.0.1', { maxRetriesPerRequest: 3 });
    this.clients.push(client);
    return client;
  }

  async boot(): Promise<void> {
    this.chosenPort ??= await freePort();
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', ''];
    args.push('--appendonly', this.options.durable ? 'yes' : 'no');
    if (this.options.durable) args.push('--appendfsync', 'always');
    args.push(...(this.options.extraArgs ?? []));
    const child = spawn(redisServerBinary(), args, { stdio: 'ignore' });
    this.process = child;
    const deadline = Date.now() + 10000;
    while (!(await canConnect(this.port))) {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode} on port ${this.port}`);
      if (Date.now() > deadline) throw new Error(`redis-server did not listen on ${this.port} within 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Stops the server process (SIGTERM lets it fsync its AOF) and waits for it to exit. */
  async halt(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }

  async restart(): Promise<void> {
    await this.halt();
    await this.boot();
  }

  async stop(): Promise<void> {
    for (const client of this.clients) client.disconnect();
    await this.halt();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
