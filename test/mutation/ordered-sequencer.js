/**
 * Runs test files in the order the Lua mutation runner asks for (files that
 * killed a mutant before first, then the fastest), so `--bail` stops a
 * mutant's run as early as possible. Without an order it keeps Jest's own.
 */
const Sequencer = require('@jest/test-sequencer').default;

class OrderedSequencer extends Sequencer {
  sort(tests) {
    const order = JSON.parse(process.env.WURK_MUTATION_ORDER || '[]');
    if (order.length === 0) return super.sort(tests);
    const rank = (path) => {
      const index = order.indexOf(path);
      return index === -1 ? order.length : index;
    };
    return [...tests].sort((a, b) => rank(a.path) - rank(b.path));
  }
}

module.exports = OrderedSequencer;
