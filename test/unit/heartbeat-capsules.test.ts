import { capsulesOf } from '../../src/server/heartbeat/heartbeat-writer';

/** Sidekiq 8's Capsule#to_h mode: strict when every weight is 0, random when every weight is 1, weighted otherwise. */
describe("the heartbeat's capsules element", () => {
  it.each([
    [{ critical: 0, default: 0 }, 'strict'],
    [{ critical: 1, default: 1 }, 'random'],
    [{ critical: 3, default: 1 }, 'weighted'],
    [{ critical: 0, default: 1 }, 'weighted'],
  ])('weights %j describe a %s capsule', (weights, mode) => {
    expect(capsulesOf({ concurrency: 4, weights: [weights] })).toEqual({ default: { concurrency: 4, mode, weights } });
  });

  it('describes each capsule with its own weights; a capsule with none listed has no weights, strict', () => {
    const capsules = [
      { name: 'default', concurrency: 2 },
      { name: 'bulk', concurrency: 1 },
    ];
    expect(capsulesOf({ concurrency: 3, weights: [{ default: 1 }], capsules })).toEqual({
      default: { concurrency: 2, mode: 'random', weights: { default: 1 } },
      bulk: { concurrency: 1, mode: 'strict', weights: {} },
    });
  });
});
