import Redis, { RedisOptions } from 'ioredis';
import { connectedAddress } from './server-address';

/** How long one Sentinel may take to answer before its answer is left out. */
const ANSWER_MS = 1000;

type NatMap = RedisOptions['natMap'];

/**
 * What the Sentinels say about the master, for the one decision that must
 * not rest on a server's word about itself: whether claims that no replica
 * acknowledged may run on this master alone (ClaimFence's last resort).
 *
 * A deposed master keeps answering `ROLE` with "master" for seconds after
 * the Sentinels promoted its replica: they reconfigure it only once they
 * have seen it claim the role for SENTINEL_PUBLISH_PERIOD × 4 (8 s). A
 * connection still on it (one whose reconnect asked a Sentinel that had
 * not learnt of the switch yet, or whose failover detector subscribed after
 * the announcement) would run claims that the demotion then throws away,
 * and the new master, which still has those jobs in their queue, runs them
 * again. So the server is trusted only if a majority of the configured
 * Sentinels answer, every answer names it, and none has a failover under
 * way (the leader sets `failover_in_progress` before it promotes anyone;
 * the others name the old master until they learn the new one).
 */
export class SentinelView {
  private readonly clients = new Map<number, Redis>();

  constructor(private readonly options: RedisOptions) {}

  /** Undefined when the Sentinels name the server `connection` is on as the master; otherwise why not. */
  async doubtsMaster(connection: Redis): Promise<string | undefined> {
    const sentinels = this.options.sentinels ?? [];
    const answers = (await Promise.all(sentinels.map((_, index) => this.ask(index)))).filter(
      (answer): answer is Record<string, string> => answer !== undefined,
    );
    if (answers.length <= sentinels.length / 2)
      return `only ${answers.length} of ${sentinels.length} Sentinel(s) answered`;
    if (answers.some((fields) => /failover_in_progress/.test(fields.flags ?? '')))
      return 'the Sentinels have a failover under way';
    const here = connectedAddress(connection);
    let runId: string | undefined;
    for (const fields of answers) {
      if (here !== undefined && this.addressOf(fields) === here) continue;
      // The Sentinels may know the server by another name (a hostname, an announced address): its run id settles it.
      runId ??= await runIdOf(connection);
      if (!fields.runid || fields.runid !== runId)
        return `the Sentinels name ${this.addressOf(fields)} as the master, not ${here ?? 'this server'}`;
    }
    return undefined;
  }

  /** Closes the Sentinel connections (opened on first need). */
  close(): void {
    for (const client of this.clients.values()) client.disconnect();
    this.clients.clear();
  }

  /** `SENTINEL MASTER <name>` from one Sentinel as a record; undefined when it does not answer in time. */
  private async ask(index: number): Promise<Record<string, string> | undefined> {
    // A null reply (the Sentinel does not monitor that name) leaves the answer out, as silence does.
    const client = this.client(index);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ANSWER_MS)));
    try {
      const name = this.options.name ?? 'mymaster';
      // A Sentinel user allowed only what ioredis needs (GET-MASTER-ADDR-BY-NAME) still answers with the address.
      const asked = client
        .call('SENTINEL', 'MASTER', name)
        .then(
          (reply) => toRecord(reply as string[]),
          () =>
            client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name).then((reply) => {
              const [ip, port] = reply as string[];
              return { ip, port };
            }),
        )
        .catch(() => undefined);
      return await Promise.race([asked, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private client(index: number): Redis {
    let client = this.clients.get(index);
    if (client) return client;
    const { host, port, family } = (this.options.sentinels ?? [])[index];
    client = new Redis({
      host: host ?? '127.0.0.1',
      port: port ?? 26379,
      family,
      username: this.options.sentinelUsername,
      password: this.options.sentinelPassword,
      tls: this.options.enableTLSForSentinelMode ? this.options.sentinelTLS : undefined,
      connectTimeout: ANSWER_MS,
      maxRetriesPerRequest: 1,
      retryStrategy: (attempt) => Math.min(100 * attempt, 1000),
      connectionName: 'wurk:sentinel-view',
      // It carries only questions: at close, a socket that does not end at once (a Sentinel away) is not worth
      // ioredis's default 2 s wait, which holds the process's exit that long.
      disconnectTimeout: 100,
      // RESP2, as every wurk connection (connection.ts): SENTINEL MASTER's reply read as a flat list.
      protocol: 2,
    });
    // A Sentinel away is an answer left out (see doubtsMaster), not an error to print.
    client.on('error', () => undefined);
    this.clients.set(index, client);
    return client;
  }

  /** The master's `host:port` in a Sentinel's answer, through the app's natMap as ioredis maps it. */
  private addressOf(fields: Record<string, string>): string {
    const key = `${fields.ip}:${fields.port}`;
    const mapped = mapAddress(this.options.natMap, key);
    return mapped ? `${mapped.host}:${mapped.port}` : key;
  }
}

function mapAddress(natMap: NatMap, key: string): { host: string; port: number } | undefined {
  if (!natMap) return undefined;
  if (typeof natMap === 'function') return natMap(key) ?? undefined;
  return natMap[key];
}

async function runIdOf(connection: Redis): Promise<string | undefined> {
  const info = await connection.info('server');
  return /run_id:(\w+)/.exec(info)?.[1];
}

function toRecord(flat: string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) record[flat[i]] = String(flat[i + 1]);
  return record;
}
