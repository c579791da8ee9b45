import { arrayEnumerator, asyncIterableEnumerator, batchedCursorEnumerator } from '../../src/iterable/enumerators';
import { IterableWorker } from '../../src/iterable/iterable-worker';
import { runIteration } from '../../src/iterable/iteration-loop';
import type { IterationInfo } from '../../src/iterable/iteration-source';
import { cursorText, IterationStore, parseSavedIteration, SavedIteration } from '../../src/iterable/iteration-state';
import { InvalidIterationStateError, JobInterruptedError } from '../../src/job/iteration-errors';

async function collect<T>(source: Iterable<T> | AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const value of source) out.push(value);
  return out;
}

/** An in-memory it-<jid> that records each save, to read what a Ruby process would find. */
class RecordingStore implements IterationStore {
  saves: SavedIteration[] = [];
  forgotten = false;
  constructor(
    private saved: SavedIteration = { executions: 0, cursor: null, runtime: 0 },
    public cancelled = false,
  ) {}
  load = async () => this.saved;
  save = async (_jid: string, state: SavedIteration) => {
    this.saves.push({ ...state });
    this.saved = { ...state };
    return this.cancelled;
  };
  forget = async () => {
    this.forgotten = true;
  };
}

class Letters extends IterableWorker<string, number, [string]> {
  seen: string[] = [];
  hooks: string[] = [];
  failAt?: string;
  override buildEnumerator(cursor: number | null, word: string) {
    return arrayEnumerator([...word], cursor);
  }
  override eachIteration(letter: string, word: string) {
    if (letter === this.failAt) throw new Error(`no ${letter} in ${word}`);
    this.seen.push(letter);
  }
  override onStart(info: IterationInfo<number>) {
    this.hooks.push(`start@${info.cursor}`);
  }
  override onResume(info: IterationInfo<number>) {
    this.hooks.push(`resume@${info.cursor}#${info.executions}`);
  }
  override onStop(info: IterationInfo<number>) {
    this.hooks.push(`stop@${info.cursor}`);
  }
  override onComplete() {
    this.hooks.push('complete');
  }
  override onCancel() {
    this.hooks.push('cancel');
  }
}

const quiet = { log: () => undefined };

function context(store: IterationStore, run: Partial<{ signal: AbortSignal; stopping: AbortSignal }> = {}) {
  return {
    run: { jid: 'j1', signal: new AbortController().signal, ...run },
    store,
    logger: quiet,
    name: 'Letters',
  };
}

describe('iterable job enumerators', () => {
  it('arrayEnumerator pairs items with their index and resumes at the saved index, as Sidekiq does', async () => {
    expect(await collect(arrayEnumerator(['a', 'b', 'c'], null))).toEqual([
      ['a', 0],
      ['b', 1],
      ['c', 2],
    ]);
    expect(await collect(arrayEnumerator(['a', 'b', 'c'], 2))).toEqual([['c', 2]]);
    expect(await collect(arrayEnumerator(['a'], 5))).toEqual([]);
  });

  it('arrayEnumerator refuses a cursor that is not an index, naming it', async () => {
    await expect(collect(arrayEnumerator(['a'], 'x' as unknown as number))).rejects.toThrow(
      new InvalidIterationStateError('arrayEnumerator cursor', 'must be a non-negative integer index (got "x")'),
    );
    await expect(collect(arrayEnumerator(['a'], -1))).rejects.toBeInstanceOf(InvalidIterationStateError);
  });

  it('asyncIterableEnumerator computes each cursor from the item and its position', async () => {
    async function* rows() {
      yield { id: 10 };
      yield { id: 12 };
    }
    expect(await collect(asyncIterableEnumerator(rows(), (row, position) => `${row.id}/${position}`))).toEqual([
      [{ id: 10 }, '10/0'],
      [{ id: 12 }, '12/1'],
    ]);
  });

  it('batchedCursorEnumerator yields each batch with the cursor that fetched it, until no next page', async () => {
    const fetched: number[] = [];
    const pages = batchedCursorEnumerator(0, (from: number) => {
      fetched.push(from);
      const items = [from, from + 1, from + 2].filter((n) => n < 7);
      return { items, next: from + 3 < 7 ? from + 3 : null };
    });
    expect(await collect(pages)).toEqual([
      [[0, 1, 2], 0],
      [[3, 4, 5], 3],
      [[6], 6],
    ]);
    expect(fetched).toEqual([0, 3, 6]);
    expect(await collect(batchedCursorEnumerator(0, () => ({ items: [], next: 1 })))).toEqual([]);
  });
});

describe('the it-<jid> hash as Sidekiq writes it', () => {
  it('reads ex, c and rt, and the field names of early 7.3 releases', () => {
    expect(parseSavedIteration('j', { ex: '3', c: '{"id":42}', rt: '1.5', cancelled: '1700000000' })).toEqual({
      executions: 3,
      cursor: { id: 42 },
      runtime: 1.5,
    });
    expect(parseSavedIteration('j', { executions: '2', cursor: '7', total_time: '0.25' })).toEqual({
      executions: 2,
      cursor: 7,
      runtime: 0.25,
    });
    expect(parseSavedIteration('j', {})).toEqual({ executions: 0, cursor: null, runtime: 0 });
    expect(parseSavedIteration('j', { cancelled: '1700000000', c: 'null' })).toEqual({
      executions: 0,
      cursor: null,
      runtime: 0,
    });
  });

  it('refuses a field that does not parse with a typed error naming it', () => {
    expect(() => parseSavedIteration('j', { c: '{oops' })).toThrow(
      new InvalidIterationStateError('it-j.c', 'is not JSON (got "{oops")'),
    );
    expect(() => parseSavedIteration('j', { ex: 'many', c: '1' })).toThrow(/it-j\.ex is not a non-negative number/);
    expect(() => parseSavedIteration('j', { rt: '-1' })).toThrow(/it-j\.rt/);
  });

  it('stores a cursor as JSON, undefined as null, and refuses one JSON cannot hold', () => {
    expect(cursorText('j', 5)).toBe('5');
    expect(cursorText('j', { id: 'a' })).toBe('{"id":"a"}');
    expect(cursorText('j', undefined)).toBe('null');
    expect(() => cursorText('j', 10n)).toThrow(InvalidIterationStateError);
  });
});

describe('the iteration loop', () => {
  it('runs every item, calls onStart, onStop and onComplete, and forgets the state', async () => {
    const worker = new Letters();
    const store = new RecordingStore();
    await runIteration(worker as never, ['abc'], context(store));
    expect(worker.seen).toEqual(['a', 'b', 'c']);
    expect(worker.hooks).toEqual(['start@null', 'stop@2', 'complete']);
    expect(store.forgotten).toBe(true);
  });

  it('resumes from the saved cursor with onResume, counting the execution', async () => {
    const worker = new Letters();
    const store = new RecordingStore({ executions: 1, cursor: 2, runtime: 1 });
    await runIteration(worker as never, ['abcd'], context(store));
    expect(worker.seen).toEqual(['c', 'd']);
    expect(worker.hooks[0]).toBe('resume@2#2');
  });

  it('stops between items when the process is stopping: the cursor of the next item is saved and it is interrupted', async () => {
    const stopping = new AbortController();
    const worker = new Letters();
    worker.eachIteration = function (letter: string) {
      this.seen.push(letter);
      if (letter === 'b') stopping.abort();
    };
    const store = new RecordingStore();
    const run = runIteration(worker as never, ['abcd'], context(store, { stopping: stopping.signal }));
    await expect(run).rejects.toEqual(expect.objectContaining({ why: 'stopping' }));
    await expect(run).rejects.toBeInstanceOf(JobInterruptedError);
    expect(worker.seen).toEqual(['a', 'b']);
    expect(store.saves.at(-1)).toEqual(expect.objectContaining({ executions: 1, cursor: 2 }));
    expect(store.forgotten).toBe(false);
    expect(worker.hooks).toEqual(['start@null', 'stop@2']);
  });

  it('stops when its maxIterationRuntime is spent', async () => {
    class Slow extends Letters {
      override readonly maxIterationRuntime = 0;
    }
    const worker = new Slow();
    const store = new RecordingStore();
    await expect(runIteration(worker as never, ['ab'], context(store))).rejects.toEqual(
      expect.objectContaining({ why: 'maxIterationRuntime' }),
    );
  });

  it('a cancelled job iterates nothing: onCancel, onStop and onComplete, then the state is forgotten', async () => {
    const worker = new Letters();
    const store = new RecordingStore(undefined, true);
    await runIteration(worker as never, ['abc'], context(store));
    expect(worker.seen).toEqual([]);
    expect(worker.hooks).toEqual(['start@null', 'cancel', 'stop@null', 'complete']);
    expect(store.forgotten).toBe(true);
  });

  it('a cancel seen at a save stops the iteration there', async () => {
    const worker = new Letters();
    const store = new RecordingStore();
    worker.eachIteration = function (letter: string) {
      this.seen.push(letter);
      store.cancelled = true;
    };
    await runIteration(worker as never, ['abc'], { ...context(store), saveIntervalMs: 0 });
    expect(worker.seen).toEqual(['a']);
    expect(worker.hooks).toContain('cancel');
  });

  it('an item that throws saves its own cursor, so the retry resumes with it', async () => {
    const worker = new Letters();
    worker.failAt = 'c';
    const store = new RecordingStore();
    await expect(runIteration(worker as never, ['abcd'], context(store))).rejects.toThrow('no c in abcd');
    expect(store.saves.at(-1)?.cursor).toBe(2);
  });

  it('skips the job when buildEnumerator returns nothing, and refuses what is not [item, cursor] pairs', async () => {
    const store = new RecordingStore();
    const none = new Letters();
    none.buildEnumerator = () => null as never;
    await runIteration(none as never, ['ab'], context(store));
    expect(none.hooks).toEqual([]);
    const notIterable = new Letters();
    notIterable.buildEnumerator = () => 42 as never;
    await expect(runIteration(notIterable as never, ['ab'], context(store))).rejects.toThrow(
      /Letters\.buildEnumerator must return an iterable/,
    );
    const notPairs = new Letters();
    notPairs.buildEnumerator = () => ['a', 'b'] as never;
    await expect(runIteration(notPairs as never, ['ab'], context(store))).rejects.toThrow(
      /yielded string at position 0; each value must be an \[item, cursor\] pair/,
    );
  });

  it('perform, called directly (tests, the testing module), iterates everything in memory', async () => {
    const worker = new Letters();
    await worker.perform('xyz');
    expect(worker.seen).toEqual(['x', 'y', 'z']);
    expect(worker.hooks).toEqual(['start@null', 'stop@2', 'complete']);
  });
});
