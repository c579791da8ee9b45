import { capsulesOf } from '../../src/server/heartbeat-writer';

/** Sidekiq 8's Capsule#to_h mode: strict when every weight is 0, random when every weight is 1, weighted otherwise. */
describe("the heartbeat's capsules element", () => {
  it.each([
    [{ critical: 0, default: 0 }, 'strict'],
    [{ critical: 1, default: 1 }, 'random'],
    [{ critical: 3, default: 1 }, 'weighted'],
  ])('weights %j describe a %s capsule', (weights, mode) => {
    expect(capsulesOf({ concurrency: 4, weights: [weights] })).toEqual({ default: { concurrency: 4, mode, weights } });
  });
});
