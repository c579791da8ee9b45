import { Module } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Worker, WurkModule } from '../../src';
import { chain, FlowService, InvalidFlowError } from '../../src/entries/flows';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

const received: Record<string, unknown[]> = {};

@Worker({ name: 'FetchStep', queue: 'flow-pipe' })
class FetchStep {
  perform(url: string): unknown {
    received.fetch = [url];
    return { url, ids: [1, 2], nested: { ok: true } };
  }
}

/** Returns nothing: the next link is handed JSON null, as Ruby Wurk hands it. */
@Worker({ name: 'ParseStep', queue: 'flow-pipe' })
class ParseStep {
  perform(...args: unknown[]): void {
    received.parse = args;
  }
}

@Worker({ name: 'StoreStep', queue: 'flow-pipe' })
class StoreStep {
  perform(...args: unknown[]): string {
    received.store = args;
    return 'stored';
  }
}

@Worker({ name: 'DoomedStep', queue: 'flow-pipe', retry: 0 })
class DoomedStep {
  perform(): void {
    throw new Error('doomed');
  }
}

/** Keys a flow writes (its records, its node batches, its nodes' status rows), not the global indexes. */
const FLOW_KEY = /^(flow:|b-|status:)/;

/** Chains created by wurk, run by a real wurk process (WurkModule, status rows and all), and every key they leave. */
describe('flow pipes and key expiry', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let app: INestApplicationContext;
  const flows = () => app.get(FlowService);

  beforeAll(async () => {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          server: { queues: ['flow-pipe', 'default'], concurrency: 2 },
          encryption: { keys: { 1: randomBytes(32) }, current: 1 },
        }),
      ],
      providers: [FetchStep, ParseStep, StoreStep, DoomedStep],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    await app.init();
  }, 30000);
  afterAll(() => app?.close());

  async function settled(fid: string, state: string) {
    return waitFor(async () => (await flows().status(fid)).state === state, { timeout: 20000, what: `flow ${state}` });
  }

  it('a 3-link chain hands each result to the next as its last argument; nothing returned arrives as null', async () => {
    const flow = await flows().create({
      nodes: chain([
        { name: 'fetch', class: 'FetchStep', args: ['https://example.com'] },
        { name: 'parse', class: 'ParseStep', args: [] },
        { name: 'store', class: 'StoreStep', args: ['reports'] },
      ]),
    });
    await settled(flow.fid, 'succeeded');
    expect(received.parse).toEqual([{ url: 'https://example.com', ids: [1, 2], nested: { ok: true } }]);
    expect(received.store).toEqual(['reports', null]);
    const status = await flows().status(flow.fid);
    expect(status.nodes.map((node) => [node.name, node.piped, node.state])).toEqual([
      ['fetch', false, 'succeeded'],
      ['parse', true, 'succeeded'],
      ['store', true, 'succeeded'],
    ]);
    // The sources were queued tracked although nobody asked: their rows are where the results came from.
    expect(await server.redis.hget(`status:${flow.jids.fetch}`, 'state')).toBe('complete');
    expect(await server.redis.exists(`status:${flow.jids.store}`)).toBe(0);
  });

  it('refuses what Ruby Wurk refuses, naming the node, and writes nothing', async () => {
    const refusals = [
      [
        { name: 'a', class: 'FetchStep', args: [] },
        { name: 'b', class: 'ParseStep', args: [], pipe: 'a', dependsOn: ['a'] },
      ],
      [
        { name: 'a', class: 'FetchStep', args: [], track: false },
        { name: 'b', class: 'ParseStep', args: [], pipe: 'a' },
      ],
      [{ name: 'b', class: 'ParseStep', args: [], pipe: 'nobody' }],
      [
        { name: 'a', class: 'FetchStep', args: [] },
        { name: 'b', class: 'ParseStep', args: [], pipe: ['a'] as never },
      ],
      // Its last argument would be sealed: the sentinel is not in the stored bytes for the result to replace.
      [
        { name: 'a', class: 'FetchStep', args: [] },
        { name: 'b', class: 'ParseStep', args: [], pipe: 'a', encrypt: true },
      ],
    ];
    for (const nodes of refusals) {
      const refusal = await flows()
        .create({ nodes })
        .catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(InvalidFlowError);
      expect(refusal).toMatchObject({ node: 'b' });
    }
    expect(() => chain([{ name: 'a', class: 'X', args: [], dependsOn: ['z'] }])).toThrow(InvalidFlowError);
    expect(await server.redis.keys('flow:*')).toEqual([]);
  });

  it('every key a flow writes expires: at creation, after each advance, after a death', async () => {
    const everyFlowKeyExpires = async (when: string) => {
      const keys = (await server.redis.keys('*')).filter((key) => FLOW_KEY.test(key));
      const ttls = await Promise.all(keys.map(async (key) => [key, await server.redis.ttl(key)] as const));
      expect({ when, without: ttls.filter(([, ttl]) => ttl < 0) }).toEqual({ when, without: [] });
      return keys.length;
    };
    const created = await flows().create({
      nodes: [
        ...chain([
          { name: 'fetch', class: 'FetchStep', args: ['u'] },
          { name: 'parse', class: 'ParseStep', args: [] },
        ]),
        { name: 'doomed', class: 'DoomedStep', args: [] },
        { name: 'after', class: 'StoreStep', args: [], dependsOn: ['doomed', 'parse'] },
      ],
      expiresIn: 3600,
    });
    expect(await everyFlowKeyExpires('at creation')).toBeGreaterThan(0);
    await settled(created.fid, 'failed');
    await waitFor(async () => (await flows().status(created.fid)).nodes[1].state === 'succeeded', {
      what: 'the chain done',
    });
    expect(await everyFlowKeyExpires('after the advances and the death')).toBeGreaterThan(
      4 /* flow, its nodes */ + 1 /* dead set */,
    );
    expect(await server.redis.exists(`flow:${created.fid}:dead`)).toBe(1);
  });
});
