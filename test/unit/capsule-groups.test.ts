import { capsuleDefaultQueues, capsuleGroups, checkWorkerCapsule, DEFAULT_CAPSULE } from '../../src/server/capsules';
import { QueueOrder } from '../../src/server/queue-order';
import { configError } from '../support/config-error';
import { freshEachTest } from '../support/fresh-module';

/** capsuleGroups and QueueOrder called directly: each refusal's option path and its words. */
describe('capsule groups and queue order: refusals named exactly', () => {
  const refusal = (run: () => unknown) => {
    const error = configError(run);
    return [error.option, error.reason];
  };

  it('builds the default group first, named "default", and a capsule without concurrency inherits the top-level one', () => {
    expect(DEFAULT_CAPSULE).toBe('default');
    const groups = capsuleGroups(['a'], 7, [{ name: 'slow', queues: ['b'] }]);
    expect(groups.map((group) => [group.name, group.order.names, group.concurrency])).toEqual([
      ['default', ['a'], 7],
      ['slow', ['b'], 7],
    ]);
    expect(capsuleGroups(['a'], 3)).toHaveLength(1);
  });

  it('refuses a capsule name that is missing, empty, "default" or taken', () => {
    expect(refusal(() => capsuleGroups(['a'], 1, [{ name: '', queues: ['b'] }]))).toEqual([
      'capsules[0].name',
      'must be a non-empty string',
    ]);
    expect(refusal(() => capsuleGroups(['a'], 1, [{ queues: ['b'] } as never]))).toEqual([
      'capsules[0].name',
      'must be a non-empty string',
    ]);
    expect(refusal(() => capsuleGroups(['a'], 1, [{ name: 'default', queues: ['b'] }]))).toEqual([
      'capsules[0].name',
      'may not be "default": that is the group of the top-level queues and concurrency',
    ]);
    expect(
      refusal(() =>
        capsuleGroups(['a'], 1, [
          { name: 'x', queues: ['b'] },
          { name: 'x', queues: ['c'] },
        ]),
      ),
    ).toEqual(['capsules[1].name', '"x" names two capsules']);
  });

  it('refuses a capsule without queues, and names its own queue errors by its path', () => {
    expect(refusal(() => capsuleGroups(['a'], 1, [{ name: 'x' } as never]))).toEqual([
      'capsules[0].queues',
      'is required: the queues this capsule processes',
    ]);
    expect(refusal(() => capsuleGroups(['a'], 1, [{ name: 'x', queues: [] }]))).toEqual([
      'capsules[0].queues',
      'must be a non-empty array',
    ]);
    expect(
      refusal(() =>
        capsuleGroups(['a'], 1, [
          { name: 'x', queues: ['b', 'c'] },
          {
            name: 'y',
            queues: [
              ['d', 1],
              ['e', 0],
            ],
          },
        ]),
      ),
    ).toEqual([
      'capsules[1].queues[1]',
      'must be a queue name or a [name, weight] pair with a whole weight from 1 to 1000 (got ["e",0])',
    ]);
  });

  it('lets errors that are not config errors through unchanged', () => {
    const boom = new TypeError('not a config error');
    const queues = ['b'];
    Object.defineProperty(queues, 0, {
      get() {
        throw boom;
      },
    });
    expect(() => capsuleGroups(['a'], 1, [{ name: 'x', queues }])).toThrow(boom);
  });

  it('refuses a queue two groups would fetch, naming the group that has it', () => {
    expect(refusal(() => capsuleGroups(['a'], 1, [{ name: 'x', queues: ['a'] }]))).toEqual([
      'capsules[0].queues',
      'lists "a", which the top-level queues (capsule "default") processes already; a queue belongs to one capsule',
    ]);
    expect(
      refusal(() =>
        capsuleGroups(['a'], 1, [
          { name: 'x', queues: ['b'] },
          { name: 'y', queues: ['b'] },
        ]),
      ),
    ).toEqual(['capsules[1].queues', 'lists "b", which capsule "x" processes already; a queue belongs to one capsule']);
  });

  it("maps each capsule to its first queue, the default's included", () => {
    expect(
      capsuleDefaultQueues(
        capsuleGroups(['a', 'b'], 1, [
          {
            name: 'x',
            queues: [
              ['c', 1],
              ['d', 2],
            ],
          },
        ]),
      ),
    ).toEqual({ default: 'a', x: 'c' });
  });

  it("refuses a worker's unknown capsule listing the capsules, and a queue its capsule does not process listing the capsule's", () => {
    const groups = capsuleGroups(['a'], 1, [{ name: 'x', queues: ['b', 'c'] }]);
    expect(refusal(() => checkWorkerCapsule('Mail', 'y', undefined, groups))).toEqual([
      '@Worker(Mail).capsule',
      '"y" is not a capsule of this app (capsules: "default", "x")',
    ]);
    expect(refusal(() => checkWorkerCapsule('Mail', 'x', 'a', groups))).toEqual([
      '@Worker(Mail).queue',
      '"a" is not processed by capsule "x" (its queues: b, c)',
    ]);
    expect(() => checkWorkerCapsule('Mail', undefined, 'anything', groups)).not.toThrow();
  });

  describe('QueueOrder', () => {
    it('refuses each bad entry with its words', () => {
      expect(refusal(() => new QueueOrder([]))).toEqual(['queues', 'must be a non-empty array']);
      expect(refusal(() => new QueueOrder('a' as never))).toEqual(['queues', 'must be a non-empty array']);
      expect(refusal(() => new QueueOrder([''] as never))).toEqual(['queues', 'names must be non-empty strings']);
      expect(refusal(() => new QueueOrder([['', 1]]))).toEqual(['queues', 'names must be non-empty strings']);
      expect(refusal(() => new QueueOrder(['a', ['b', 1]] as never))).toEqual([
        'queues',
        'mixes strict names and [name, weight] pairs; use one form',
      ]);
      // 1e308 was a bare "Invalid array length": the fetch order repeats a name `weight` times.
      for (const entry of [['b', 1.5], ['b', 0], [2, 1], 'b'.length, null, ['b', 1001], ['b', 1e308]]) {
        expect(refusal(() => new QueueOrder([['a', 1], entry] as never))).toEqual([
          'queues[1]',
          `must be a queue name or a [name, weight] pair with a whole weight from 1 to 1000 (got ${JSON.stringify(entry)})`,
        ]);
      }
    });

    it('takes a weight of exactly 1000', () => {
      expect(
        new QueueOrder([
          ['a', 1000],
          ['b', 1],
        ]).weights,
      ).toEqual({ a: 1000, b: 1 });
    });

    it('takes a weight of exactly 1, gives strict queues weight 0, and lists a name once', () => {
      const weighted = new QueueOrder([
        ['a', 1],
        ['b', 2],
        ['a', 1],
      ]);
      expect(weighted.names).toEqual(['a', 'b']);
      expect(weighted.strict).toBe(false);
      const strict = new QueueOrder(['a', 'b']);
      expect(strict.weights).toEqual({ a: 0, b: 0 });
      expect(strict.next()).toBe(strict.names);
    });

    it('shuffles the weighted queues on every fetch, each queue listed once', () => {
      const order = new QueueOrder([
        ['a', 1],
        ['b', 1],
        ['c', 1],
      ]);
      const firsts = new Set<string>();
      for (let i = 0; i < 200; i++) {
        const queues = order.next();
        expect([...queues].sort()).toEqual(['a', 'b', 'c']);
        firsts.add(queues[0]);
      }
      // Shuffled: each queue comes first some of the time.
      expect([...firsts].sort()).toEqual(['a', 'b', 'c']);
    });
  });
});

describe('the default capsule, the module loaded per test (its name is built at import)', () => {
  const fresh = freshEachTest(() => require('../../src/server/capsules') as typeof import('../../src/server/capsules'));

  it('is named "default", as Sidekiq 7 names the group of the top-level queues in info.capsules and weights', () => {
    expect(fresh.module.DEFAULT_CAPSULE).toBe('default');
    expect(fresh.module.capsuleGroups(['a'], 2).map((group) => group.name)).toEqual(['default']);
  });
});
