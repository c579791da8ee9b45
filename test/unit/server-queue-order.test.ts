import { WurkConfigError } from '../../src/job/errors';
import { QueueOrder } from '../../src/server/queue-order';

describe('queue order', () => {
  it('keeps strict order on every call', () => {
    const order = new QueueOrder(['critical', 'default', 'critical']);
    expect(order.strict).toBe(true);
    expect(order.next()).toEqual(['critical', 'default']);
    expect(order.next()).toEqual(['critical', 'default']);
  });

  it('puts a queue first in proportion to its weight', () => {
    const order = new QueueOrder([
      ['critical', 3],
      ['default', 1],
    ]);
    expect(order.strict).toBe(false);
    expect(order.weights).toEqual({ critical: 3, default: 1 });
    let first = 0;
    const rounds = 4000;
    for (let i = 0; i < rounds; i++) {
      const queues = order.next();
      expect(queues.sort()).toEqual(['critical', 'default']);
      if (order.next()[0] === 'critical') first++;
    }
    expect(first / rounds).toBeGreaterThan(0.68);
    expect(first / rounds).toBeLessThan(0.82);
  });

  it('rejects bad specs naming the entry', () => {
    expect(() => new QueueOrder([])).toThrow(WurkConfigError);
    expect(() => new QueueOrder([['a', 0]])).toThrow(/queues\[0\]/);
    expect(() => new QueueOrder(['a', ['b', 1]] as never)).toThrow(/mixes/);
    expect(() => new QueueOrder([''])).toThrow(/non-empty/);
  });
});
