import { Keys } from '../../src/redis/keys';
import { runScript } from '../../src/redis/scripts';
import { usePrivateRedis } from '../support/private-redis';

/**
 * lua/batch_delete.lua and lua/batch_index_sweep.lua pinned at the scripts (KEYS/ARGV as documented at their tops):
 * a delete removes every key of the batch and its entries in every index whatever the index's type, and nothing of
 * another batch; a sweep drops only the bids whose hash is still gone.
 */
describe('lua/batch_delete.lua and lua/batch_index_sweep.lua', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;

  const remove = (bid: string) =>
    runScript<number>(
      redis(),
      'batch_delete',
      [Keys.batch(bid), Keys.batches, Keys.deadBatches, ...Keys.batchKeys(bid)],
      [bid, Keys.batchTag('')],
    );
  const sweep = (index: string, ...bids: string[]) =>
    runScript<number>(redis(), 'batch_index_sweep', [index, ...bids.map(Keys.batch)], bids);

  /** A batch with every key Sidekiq Pro and Ruby Wurk keep for one, indexed under `tags`. */
  async function seed(bid: string, tags: string[] = []): Promise<void> {
    await redis().hset(Keys.batch(bid), {
      created_at: '1790000000.5',
      total: '2',
      pending: '1',
      tags: JSON.stringify(tags),
    });
    for (const key of Keys.batchKeys(bid)) {
      if (key.endsWith('-failinfo')) await redis().hset(key, 'j1', '{}');
      else if (/-(complete|success|death)$/.test(key)) await redis().set(key, '1790000001');
      else if (!key.endsWith('-tags')) await redis().sadd(key, 'j1');
    }
    await redis().zadd(Keys.batches, '1790000000.5', bid);
    await redis().zadd(Keys.deadBatches, '1790000000.5', bid);
    for (const tag of tags) await redis().sadd(Keys.batchTag(tag), bid);
  }

  describe('batch_delete', () => {
    it('unlinks every key of the batch and drops it from batches, dead-batches and its tags, nothing else', async () => {
      await seed('Gone0000000001', ['customer:1', 'france']);
      await seed('Kept0000000001', ['customer:1']);
      expect(await remove('Gone0000000001')).toBe(1);
      expect(await redis().keys('b-Gone0000000001*')).toEqual([]);
      expect(await redis().zrange(Keys.batches, '0', '-1')).toEqual(['Kept0000000001']);
      expect(await redis().zrange(Keys.deadBatches, '0', '-1')).toEqual(['Kept0000000001']);
      expect(await redis().smembers(Keys.batchTag('customer:1'))).toEqual(['Kept0000000001']);
      expect(await redis().exists(Keys.batchTag('france'))).toBe(0);
      expect((await redis().keys('b-Kept0000000001*')).length).toBe(1 + Keys.batchKeys('x').length - 1);
    });

    it("reads tags from Pro's b-<bid>-tags set too, and cleans a HASH or ZSET tag index; leaves other types alone", async () => {
      await seed('Tagged00000001');
      await redis().sadd(Keys.batchKeys('Tagged00000001')[0], 'as-hash', 'as-zset', 'as-string', 'as-set');
      await redis().hset(Keys.batchTag('as-hash'), 'Tagged00000001', '1', 'Other000000001', '1');
      await redis().zadd(Keys.batchTag('as-zset'), 1, 'Tagged00000001', 2, 'Other000000001');
      await redis().set(Keys.batchTag('as-string'), 'Tagged00000001');
      await redis().sadd(Keys.batchTag('as-set'), 'Tagged00000001', 'Other000000001');
      expect(await remove('Tagged00000001')).toBe(1);
      expect(await redis().hkeys(Keys.batchTag('as-hash'))).toEqual(['Other000000001']);
      expect(await redis().zrange(Keys.batchTag('as-zset'), '0', '-1')).toEqual(['Other000000001']);
      expect(await redis().get(Keys.batchTag('as-string'))).toBe('Tagged00000001');
      expect(await redis().smembers(Keys.batchTag('as-set'))).toEqual(['Other000000001']);
      expect(await redis().exists(Keys.batchKeys('Tagged00000001')[0])).toBe(0);
    });

    it('takes a malformed tags field for no tag, and an array of non-strings for none of them', async () => {
      for (const [bid, text] of [
        ['Bad00000000001', 'not json'],
        ['Bad00000000002', '{"a":"b"}'],
        ['Bad00000000003', '[1, null, "real"]'],
        ['Bad00000000004', '"real"'],
      ]) {
        await redis().hset(Keys.batch(bid), 'tags', text);
        await redis().sadd(Keys.batchTag('real'), bid);
        await redis().sadd(Keys.batchTag('a'), bid);
        expect(await remove(bid)).toBe(1);
      }
      expect((await redis().smembers(Keys.batchTag('real'))).sort()).toEqual([
        'Bad00000000001',
        'Bad00000000002',
        'Bad00000000004',
      ]);
      expect((await redis().smembers(Keys.batchTag('a'))).length).toBe(4);
    });

    it('answers 0 for a batch whose hash is gone, and removes its leftovers all the same', async () => {
      await seed('Expired0000001', ['t']);
      await redis().del(Keys.batch('Expired0000001'));
      expect(await remove('Expired0000001')).toBe(0);
      expect(await redis().keys('b-Expired0000001*')).toEqual([]);
      expect(await redis().zcard(Keys.batches)).toBe(0);
      expect(await redis().zcard(Keys.deadBatches)).toBe(0);
      expect(await remove('NeverWas000001')).toBe(0);
    });
  });

  describe('batch_index_sweep', () => {
    it('drops from a ZSET, SET or HASH index the bids whose hash is gone, and keeps the others', async () => {
      await redis().hset(Keys.batch('Live0000000001'), 'total', '1');
      for (const [index, add] of [
        [Keys.batches, () => redis().zadd(Keys.batches, 1, 'Live0000000001', 2, 'Gone0000000001', 3, 'Gone0000000002')],
        [
          Keys.batchTag('s'),
          () => redis().sadd(Keys.batchTag('s'), 'Live0000000001', 'Gone0000000001', 'Gone0000000002'),
        ],
        [
          Keys.batchTag('h'),
          () => redis().hset(Keys.batchTag('h'), 'Live0000000001', '1', 'Gone0000000001', '1', 'Gone0000000002', '1'),
        ],
      ] as const) {
        await add();
        expect(await sweep(index, 'Live0000000001', 'Gone0000000001', 'Gone0000000002', 'NotIndexed0001')).toBe(2);
      }
      expect(await redis().zrange(Keys.batches, '0', '-1')).toEqual(['Live0000000001']);
      expect(await redis().smembers(Keys.batchTag('s'))).toEqual(['Live0000000001']);
      expect(await redis().hkeys(Keys.batchTag('h'))).toEqual(['Live0000000001']);
    });

    it('drops nothing from an index of another type, or one that does not exist', async () => {
      await redis().set(Keys.batchTag('str'), 'Gone0000000001');
      expect(await sweep(Keys.batchTag('str'), 'Gone0000000001')).toBe(0);
      expect(await redis().get(Keys.batchTag('str'))).toBe('Gone0000000001');
      expect(await sweep(Keys.batchTag('none'), 'Gone0000000001')).toBe(0);
    });
  });
});
