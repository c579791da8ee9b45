import Redis from 'ioredis';
import { SentinelView } from '../../src/redis/sentinel-view';
import { freePort } from '../support/redis-server';
import { MASTER_NAME, SentinelCluster } from '../support/sentinel';
import { waitFor } from '../support/wait';

/**
 * SentinelView's rules one by one, on a steady cluster (master, replica,
 * three real Sentinels): who counts as an answer, how many answers are a
 * majority, how the Sentinels' address for the master is read (natMap, run
 * id) and what a Sentinel user limited to GET-MASTER-ADDR-BY-NAME still
 * allows. The hazard these rules guard against, a deposed master still
 * answering "master", is staged in test/chaos/sentinel-failover.test.ts.
 */
describe('SentinelView: whether the Sentinels name this server as the master', () => {
  let cluster: SentinelCluster;
  let master: Redis;
  let replica: Redis;
  let masterPort: number;
  let replicaPort: number;
  const views: SentinelView[] = [];

  function viewOf(options: ConstructorParameters<typeof SentinelView>[0]): SentinelView {
    const view = new SentinelView(options);
    views.push(view);
    return view;
  }

  function pinnedTo(port: number): Redis {
    const client = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
    return client;
  }

  beforeAll(async () => {
    cluster = await SentinelCluster.start();
    masterPort = await cluster.masterPort();
    replicaPort = cluster.servers.map((server) => server.port).find((port) => port !== masterPort) as number;
    master = pinnedTo(masterPort);
    replica = pinnedTo(replicaPort);
    await Promise.all([master.ping(), replica.ping()]);
    // A Sentinel user allowed only what ioredis itself needs: SENTINEL MASTER is refused, the address still answers.
    await cluster.addLimitedUser('wurk-limited', 'secret');
  }, 60000);

  afterEach(() => {
    for (const view of views.splice(0)) view.close();
  });

  afterAll(async () => {
    master?.disconnect();
    replica?.disconnect();
    await cluster?.stop();
  });

  it('trusts the server every Sentinel names, and doubts the replica, naming both addresses', async () => {
    const view = viewOf(cluster.sentinelOptions);
    expect(await view.doubtsMaster(master)).toBeUndefined();
    expect(await view.doubtsMaster(replica)).toBe(
      `the Sentinels name 127.0.0.1:${masterPort} as the master, not 127.0.0.1:${replicaPort}`,
    );
  });

  it('a Sentinel that does not monitor the name is no answer: none is no majority', async () => {
    const view = viewOf({ ...cluster.sentinelOptions, name: 'not-monitored' });
    expect(await view.doubtsMaster(master)).toBe('only 0 of 3 Sentinel(s) answered');
  });

  it('the name defaults to ioredis\'s "mymaster"', async () => {
    const { sentinels } = cluster.sentinelOptions;
    // The cluster monitors another name, so a view without one hears from no Sentinel.
    expect(MASTER_NAME).not.toBe('mymaster');
    expect(await viewOf({ sentinels }).doubtsMaster(master)).toBe('only 0 of 3 Sentinel(s) answered');
  });

  it('a majority of the configured Sentinels must answer: 2 of 3 is one, 1 of 3 and 2 of 4 are not', async () => {
    const live = cluster.sentinelOptions.sentinels;
    const away = [
      { host: '127.0.0.1', port: await freePort() },
      { host: '127.0.0.1', port: await freePort() },
    ];
    const twoOfThree = viewOf({ ...cluster.sentinelOptions, sentinels: [live[0], live[1], away[0]] });
    expect(await twoOfThree.doubtsMaster(master)).toBeUndefined();
    const oneOfThree = viewOf({ ...cluster.sentinelOptions, sentinels: [live[0], away[0], away[1]] });
    expect(await oneOfThree.doubtsMaster(master)).toBe('only 1 of 3 Sentinel(s) answered');
    const twoOfFour = viewOf({ ...cluster.sentinelOptions, sentinels: [live[0], live[1], away[0], away[1]] });
    expect(await twoOfFour.doubtsMaster(master)).toBe('only 2 of 4 Sentinel(s) answered');
    // No Sentinels configured: nothing answers, and nothing is trusted.
    expect(await viewOf({ name: MASTER_NAME }).doubtsMaster(master)).toBe('only 0 of 0 Sentinel(s) answered');
  });

  it("reads the Sentinels' address through natMap, as ioredis does (a map or a function), the run id settling a mismatch", async () => {
    // The app knows the master by another name than the one the Sentinels announce (a NAT, a proxy).
    const alias = { host: 'master.example', port: 7000 };
    const announced = `127.0.0.1:${masterPort}`;
    const byMap = viewOf({ ...cluster.sentinelOptions, natMap: { [announced]: alias } });
    const byFunction = viewOf({
      ...cluster.sentinelOptions,
      natMap: (key: string) => (key === announced ? alias : null),
    });
    for (const view of [byMap, byFunction]) {
      // The address read through the map is not the connection's: the run id in SENTINEL MASTER's record decides.
      expect(await view.doubtsMaster(master)).toBeUndefined();
      expect(await view.doubtsMaster(replica)).toBe(
        `the Sentinels name master.example:7000 as the master, not 127.0.0.1:${replicaPort}`,
      );
    }
  });

  it('a Sentinel user limited to GET-MASTER-ADDR-BY-NAME: the address alone decides, read through natMap', async () => {
    const limited = { ...cluster.sentinelOptions, sentinelUsername: 'wurk-limited', sentinelPassword: 'secret' };
    const view = viewOf(limited);
    expect(await view.doubtsMaster(master)).toBeUndefined();
    expect(await view.doubtsMaster(replica)).toBe(
      `the Sentinels name 127.0.0.1:${masterPort} as the master, not 127.0.0.1:${replicaPort}`,
    );
    // The map sends the announced master to the replica's address: the replica now matches, and the master, with
    // no run id to settle the mismatch, is refused rather than trusted.
    const mapped = viewOf({
      ...limited,
      natMap: { [`127.0.0.1:${masterPort}`]: { host: '127.0.0.1', port: replicaPort } },
    });
    expect(await mapped.doubtsMaster(replica)).toBeUndefined();
    expect(await mapped.doubtsMaster(master)).toBe(
      `the Sentinels name 127.0.0.1:${replicaPort} as the master, not 127.0.0.1:${masterPort}`,
    );
  });

  it('a Sentinel that refuses the user altogether is no answer', async () => {
    const view = viewOf({ ...cluster.sentinelOptions, sentinelUsername: 'wurk-limited', sentinelPassword: 'wrong' });
    expect(await view.doubtsMaster(master)).toBe('only 0 of 3 Sentinel(s) answered');
  });

  it('close() ends its Sentinel connections, and a later question opens new ones', async () => {
    const view = viewOf(cluster.sentinelOptions);
    expect(await view.doubtsMaster(master)).toBeUndefined();
    const opened = await sentinelClients();
    expect(opened).toBeGreaterThanOrEqual(3);
    view.close();
    await waitFor(async () => (await sentinelClients()) <= opened - 3, {
      timeout: 5000,
      interval: 20,
      what: 'the Sentinel connections to close',
    });
    expect(await view.doubtsMaster(master)).toBeUndefined();
  });

  // Last: it moves the master.
  it('doubts every server while a Sentinel reports a failover under way, then trusts the promoted one', async () => {
    const view = viewOf(cluster.sentinelOptions);
    const answers = new Set<string>();
    let watching = true;
    // Asked in a loop from before the failover until the Sentinels name the new master: the leader's
    // failover_in_progress flag stands from its election to the switch (seconds with these timings).
    const watch = (async () => {
      while (watching) answers.add(String(await view.doubtsMaster(master)));
    })();
    const promoted = await cluster.failover();
    expect(promoted).toBe(replicaPort);
    watching = false;
    await watch;
    expect([...answers]).toContain('the Sentinels have a failover under way');
    await waitFor(async () => (await view.doubtsMaster(replica)) === undefined, {
      timeout: 10000,
      interval: 50,
      what: 'every Sentinel to name the promoted replica',
    });
    expect(await view.doubtsMaster(master)).toMatch(/^the Sentinels name 127\.0\.0\.1:\d+ as the master, not /);
  }, 30000);

  const sentinelAdmins = new Map<number, Redis>();

  /** Connections named wurk:sentinel-view across the three Sentinels. */
  async function sentinelClients(): Promise<number> {
    let count = 0;
    for (const { port } of cluster.sentinelOptions.sentinels) {
      if (!sentinelAdmins.has(port)) sentinelAdmins.set(port, cluster.admin(port));
      const list = String(await sentinelAdmins.get(port)?.call('CLIENT', 'LIST'));
      count += list.split('\n').filter((line) => line.includes('name=wurk:sentinel-view')).length;
    }
    return count;
  }
});
