import { MAX_QUEUE_WEIGHT } from '../config/option-rules';
import { WurkConfigError } from '../job/errors';
import type { QueueSpec } from '../job/queue-name';

export type { QueueSpec } from '../job/queue-name';

/**
 * The order queues are tried in for one fetch. Strict mode is the declared
 * order every time; weighted mode repeats each queue by its weight, shuffles
 * and de-duplicates on every call, so a queue of weight 3 comes first three
 * times as often as one of weight 1, and none starves.
 */
export class QueueOrder {
  readonly names: string[];
  readonly weights: Record<string, number>;
  private readonly weighted: string[] | undefined;

  constructor(spec: QueueSpec) {
    if (!Array.isArray(spec) || spec.length === 0) throw new WurkConfigError('queues', 'must be a non-empty array');
    const entries: Array<[string, number]> = spec.map((entry, index) => {
      if (typeof entry === 'string') return [entry, 0];
      // The fetch order repeats each name `weight` times: 1e308 was a bare "Invalid array length".
      if (
        Array.isArray(entry) &&
        typeof entry[0] === 'string' &&
        Number.isInteger(entry[1]) &&
        entry[1] >= 1 &&
        entry[1] <= MAX_QUEUE_WEIGHT
      )
        return [entry[0], entry[1]];
      throw new WurkConfigError(
        `queues[${index}]`,
        `must be a queue name or a [name, weight] pair with a whole weight from 1 to ${MAX_QUEUE_WEIGHT} (got ${JSON.stringify(entry)})`,
      );
    });
    for (const [name] of entries) {
      if (name.length === 0) throw new WurkConfigError('queues', 'names must be non-empty strings');
    }
    const kinds = new Set(entries.map(([, weight]) => weight === 0));
    if (kinds.size > 1)
      throw new WurkConfigError('queues', 'mixes strict names and [name, weight] pairs; use one form');
    this.names = [...new Set(entries.map(([name]) => name))];
    this.weights = Object.fromEntries(entries.map(([name, weight]) => [name, weight]));
    this.weighted = kinds.has(true)
      ? undefined
      : entries.flatMap(([name, weight]) => new Array<string>(weight).fill(name));
  }

  get strict(): boolean {
    return this.weighted === undefined;
  }

  /** The queues to try, first to last, for this fetch. */
  next(): string[] {
    if (!this.weighted) return this.names;
    // shuffling the kept list itself instead of a copy draws the same orders (each shuffle starts from whatever order
    // it finds).
    // Stryker disable next-line MethodExpression
    const list = this.weighted.slice();
    // Stryker disable next-line EqualityOperator: a last step at i = 0 swaps the first entry with itself.
    for (let i = list.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [list[i], list[j]] = [list[j], list[i]];
    }
    return [...new Set(list)];
  }
}
