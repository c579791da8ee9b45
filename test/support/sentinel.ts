import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { freePort, RedisServer, redisServerBinary } from './redis-server';
import { waitFor } from './wait';

export const MASTER_NAME = 'wurkmaster';

/**
 * Sentinel timings tuned down so a failover takes about a second or two
 * instead of the production half minute: a master unanswering for 500 ms is
 * down, and a stuck failover is abandoned after 2 s.
 */
const DOWN_AFTER_MS = 500;
const FAILOVER_TIMEOUT_MS = 2000;

/** One redis-server in Sentinel mode on a free loopback port, with its own rewritable config file. */
class SentinelProcess {
  private child?: ChildProcess;
  readonly dir = mkdtempSync(join(tmpdir(), 'wurk-sentinel-'));

  constructor(readonly port: number) {}

  async boot(masterPort: number): Promise<void> {
    const config = join(this.dir, 'sentinel.conf');
    writeFileSync(
      config,
      [
        `port ${this.port}`,
        'bind 127.0.0.1',
        `dir ${this.dir}`,
        `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${masterPort} 2`,
        `sentinel down-after-milliseconds ${MASTER_NAME} ${DOWN_AFTER_MS}`,
        `sentinel failover-timeout ${MASTER_NAME} ${FAILOVER_TIMEOUT_MS}`,
        `sentinel parallel-syncs ${MASTER_NAME} 1`,
        '',
      ].join('\n'),
    );
    this.child = spawn(redisServerBinary(), [config, '--sentinel'], { stdio: 'ignore' });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A master, one replica and three Sentinels, all real processes on free
 * ports: the smallest topology that survives losing its master. Both data
 * servers are append-only with fsync always, so a restart loses nothing the
 * server acknowledged.
 */
export class SentinelCluster {
  readonly servers: RedisServer[] = [];
  private readonly sentinels: SentinelProcess[] = [];
  private readonly clients: Redis[] = [];

  static async start(): Promise<SentinelCluster> {
    const cluster = new SentinelCluster();
    await cluster.boot();
    return cluster;
  }

  private async boot(): Promise<void> {
    const master = new RedisServer({ durable: true });
    await master.boot();
    const replica = new RedisServer({ durable: true, extraArgs: ['--replicaof', '127.0.0.1', String(master.port)] });
    await replica.boot();
    this.servers.push(master, replica);
    const admin = this.admin(replica.port);
    await waitFor(async () => (await admin.info('replication')).includes('master_link_status:up'), {
      timeout: 10000,
      what: 'the replica in sync',
    });
    for (let i = 0; i < 3; i++) {
      const sentinel = new SentinelProcess(await freePort());
      await sentinel.boot(master.port);
      this.sentinels.push(sentinel);
    }
    // Ready when every Sentinel knows the replica and the other two Sentinels.
    for (const sentinel of this.sentinels) {
      const client = this.admin(sentinel.port);
      await waitFor(
        async () => {
          const fields = toRecord((await client.call('SENTINEL', 'MASTER', MASTER_NAME)) as string[]);
          return Number(fields['num-slaves']) >= 1 && Number(fields['num-other-sentinels']) >= 2;
        },
        { timeout: 15000, interval: 50, what: `sentinel ${sentinel.port} to see the replica and its peers` },
      );
    }
  }

  /** What to give wurk's `redis` option: the Sentinels and the master's name. */
  get sentinelOptions(): { sentinels: Array<{ host: string; port: number }>; name: string } {
    return { sentinels: this.sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })), name: MASTER_NAME };
  }

  /** The port of the server the Sentinels currently call master. */
  async masterPort(): Promise<number> {
    const [, port] = (await this.admin(this.sentinels[0].port).call(
      'SENTINEL',
      'GET-MASTER-ADDR-BY-NAME',
      MASTER_NAME,
    )) as string[];
    return Number(port);
  }

  async master(): Promise<RedisServer> {
    const port = await this.masterPort();
    const server = this.servers.find((candidate) => candidate.port === port);
    if (!server) throw new Error(`no server on master port ${port}`);
    return server;
  }

  /** A direct client of one data server, for assertions; closed by stop(). */
  admin(port: number): Redis {
    const client = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 3, lazyConnect: false });
    client.on('error', () => undefined);
    this.clients.push(client);
    return client;
  }

  /**
   * A Sentinel user allowed only what ioredis itself needs to find the master (GET-MASTER-ADDR-BY-NAME, naming its
   * connection, INFO, PING), on every Sentinel: SENTINEL MASTER is refused to it.
   */
  async addLimitedUser(name: string, password: string): Promise<void> {
    for (const sentinel of this.sentinels)
      await this.admin(sentinel.port).call(
        'ACL',
        'SETUSER',
        name,
        'on',
        `>${password}`,
        '+sentinel|get-master-addr-by-name',
        '+client|setname',
        '+info',
        '+ping',
      );
  }

  /**
   * A graceful `SENTINEL FAILOVER` (what a managed service does for maintenance); resolves once the Sentinels name the
   * new master.
   */
  async failover(): Promise<number> {
    const before = await this.masterPort();
    await this.admin(this.sentinels[0].port).call('SENTINEL', 'FAILOVER', MASTER_NAME);
    await waitFor(async () => (await this.masterPort()) !== before, {
      timeout: 20000,
      interval: 20,
      what: 'the Sentinels to name a new master',
    });
    return this.masterPort();
  }

  /** Waits until the server on `port` reports the role given (the old master demoted, a restarted one re-attached). */
  async waitForRole(port: number, role: 'master' | 'slave', timeout = 30000): Promise<void> {
    const client = this.admin(port);
    await waitFor(async () => (await client.info('replication')).includes(`role:${role}`), {
      timeout,
      interval: 50,
      what: `${port} to become ${role}`,
    });
  }

  async stop(): Promise<void> {
    for (const client of this.clients) client.disconnect();
    await Promise.all(this.sentinels.map((sentinel) => sentinel.stop()));
    await Promise.all(this.servers.map((server) => server.stop()));
  }
}

function toRecord(flat: string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) record[flat[i]] = flat[i + 1];
  return record;
}
