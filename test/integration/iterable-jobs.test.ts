import { arrayEnumerator } from '../../src/iterable/enumerators';
import { IterableWorker } from '../../src/iterable/iterable-worker';
import { RedisIterationRunner } from '../../src/iterable/iteration-runner';
import type { IterationInfo } from '../../src/iterable/iteration-source';
import { cancelIteration } from '../../src/iterable/iteration-state';
import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { Harness, useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

const ITEMS = Array.from({ length: 40 }, (_, n) => n);

/** Counts each item it processes; optionally holds at one item until told to go on. */
class Counting extends IterableWorker<number, number, [string]> {
  readonly processed: number[] = [];
  readonly infos: string[] = [];
  holdAt?: number;
  private release?: () => void;
  reached?: Promise<void>;
  private reach?: () => void;

  hold(at: number): void {
    this.holdAt = at;
    this.reached = new Promise((resolve) => (this.reach = resolve));
  }

  go(): void {
    this.holdAt = undefined;
    this.release?.();
  }

  override buildEnumerator(cursor: number | null) {
    return arrayEnumerator(ITEMS, cursor);
  }

  override async eachIteration(item: number, label: string) {
    if (label === 'fail' && item === 7 && !this.processed.includes(-7)) {
      this.processed.push(-7);
      throw new Error('item 7 failed once');
    }
    this.processed.push(item);
    if (item === this.holdAt) {
      this.reach?.();
      await new Promise<void>((resolve) => (this.release = resolve));
    }
  }

  override onStart(info: IterationInfo<number>) {
    this.infos.push(`start ${info.executions}`);
  }

  override onResume(info: IterationInfo<number>) {
    this.infos.push(`resume ${info.executions} @${info.cursor}`);
  }

  override onComplete(info: IterationInfo<number>) {
    this.infos.push(`complete @${info.cursor}${info.cancelled ? ' cancelled' : ''}`);
  }
}

/**
 * Iterable jobs through real managers over a real redis-server: the cursor in it-<jid> as Sidekiq keeps it, the hand
 * back at stop, cancel, unusable state and failures.
 */
describe('iterable jobs through the process plane', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);
  const redis = () => server.client();

  function process(worker: Counting, saveIntervalMs?: number): Harness {
    const h = harness([{ name: 'CountingJob', instance: worker as never, options: { retry: 3 } }], {
      queues: ['default'],
      concurrency: 2,
    });
    const registered = h.registry.get('CountingJob');
    h.registry.register({
      ...registered!,
      iteration: new RedisIterationRunner(
        worker,
        'CountingJob',
        h.connections.command,
        { log: () => undefined },
        saveIntervalMs,
      ),
    });
    return h;
  }

  it('iterates every item once, then deletes it-<jid>', async () => {
    const worker = new Counting();
    const h = process(worker);
    const jid = await h.client.push({ class: 'CountingJob', args: ['run'] });
    await h.manager.start();
    await waitFor(() => worker.infos.includes('complete @39'), { what: 'completion' });
    expect(worker.processed).toEqual(ITEMS);
    expect(worker.infos).toEqual(['start 1', 'complete @39']);
    await waitFor(async () => (await redis().exists(Keys.iteration(jid as string))) === 0, { what: 'it-<jid> gone' });
  });

  it('a stopping process saves the cursor and hands the job back; another process resumes it from there', async () => {
    const first = new Counting();
    first.hold(12);
    const a = process(first);
    const jid = (await a.client.push({ class: 'CountingJob', args: ['run'] })) as string;
    await a.manager.start();
    await first.reached;
    const stopping = a.manager.stop();
    first.go();
    await stopping;
    // Back in its queue as fetched, with its cursor at the next item and one execution counted.
    const queued = await redis().lrange('queue:default', 0, -1);
    expect(queued.map((text) => JSON.parse(text).jid)).toEqual([jid]);
    expect(await redis().hgetall(Keys.iteration(jid))).toEqual(expect.objectContaining({ ex: '1', c: '13' }));
    expect(await redis().zcard('retry')).toBe(0);
    expect(Number(await redis().ttl(Keys.iteration(jid)))).toBeGreaterThan(29 * 24 * 3600);

    const second = new Counting();
    const b = process(second);
    await b.manager.start();
    await waitFor(() => second.infos.some((line) => line.startsWith('complete')), { what: 'resumed completion' });
    expect(second.infos).toEqual(['resume 2 @13', 'complete @39']);
    // Every item exactly once across the two processes: the stop fell between items.
    expect([...first.processed, ...second.processed]).toEqual(ITEMS);
  });

  it('cancel before the run: nothing iterated, hooks say cancelled; mid-run: it stops at the next save', async () => {
    const worker = new Counting();
    const h = process(worker, 0);
    const early = (await h.client.push({ class: 'CountingJob', args: ['run'] })) as string;
    const at = await cancelIteration(redis(), early);
    expect(Math.abs(at - Date.now() / 1000)).toBeLessThan(5);
    // A second cancel keeps the first time (HSETNX).
    expect(await cancelIteration(redis(), early)).toBe(at);
    await h.manager.start();
    await waitFor(() => worker.infos.includes('complete @null cancelled'), { what: 'cancelled completion' });
    expect(worker.processed).toEqual([]);

    worker.hold(5);
    const late = (await h.client.push({ class: 'CountingJob', args: ['run'] })) as string;
    await worker.reached;
    await cancelIteration(redis(), late);
    worker.go();
    await waitFor(() => worker.infos.includes('complete @6 cancelled'), { what: 'mid-run cancel' });
    expect(worker.processed).toEqual([0, 1, 2, 3, 4, 5]);
    await waitFor(async () => (await redis().exists(Keys.iteration(late))) === 0, { what: 'it-<jid> gone' });
  });

  it('a cursor that does not parse files the job in dead at once, naming the field', async () => {
    const worker = new Counting();
    const h = process(worker);
    const jid = (await h.client.push({ class: 'CountingJob', args: ['run'] })) as string;
    await redis().hset(Keys.iteration(jid), { ex: '1', c: '{oops', rt: '0.1' });
    await h.manager.start();
    const dead = await waitFor(async () => (await redis().zrange('dead', '0', '-1'))[0], { what: 'a dead entry' });
    expect(JSON.parse(dead)).toEqual(
      expect.objectContaining({
        jid,
        error_class: 'InvalidIterationStateError',
        error_message: `it-${jid}.c is not JSON (got "{oops")`,
      }),
    );
    expect(worker.processed).toEqual([]);
    expect(await redis().zcard('retry')).toBe(0);
  });

  it('a failing item goes to retry with its own cursor saved; the retry resumes with it', async () => {
    const worker = new Counting();
    const h = process(worker);
    const jid = (await h.client.push({ class: 'CountingJob', args: ['fail'] })) as string;
    await h.manager.start();
    await waitFor(async () => (await redis().zcard('retry')) === 1, { what: 'a retry entry' });
    expect(await redis().hget(Keys.iteration(jid), 'c')).toBe('7');
    // Due now: the poller brings it back.
    const [entry] = await redis().zrange('retry', '0', '-1');
    await redis().zadd('retry', '0', entry);
    await waitFor(() => worker.infos.some((line) => line.startsWith('complete')), { what: 'completion after retry' });
    expect(worker.infos).toEqual(['start 1', 'resume 2 @7', 'complete @39']);
    expect(worker.processed.filter((n) => n >= 0)).toEqual(ITEMS);
  });

  it('maxIterationRuntime hands the job back between items and it goes on in the same process', async () => {
    class Sliced extends Counting {
      override readonly maxIterationRuntime = 0.02;
      override async eachIteration(item: number, label: string) {
        await new Promise((resolve) => setTimeout(resolve, 2));
        await super.eachIteration(item, label);
      }
    }
    const worker = new Sliced();
    const h = process(worker);
    const jid = (await h.client.push({ class: 'CountingJob', args: ['run'] })) as string;
    await h.manager.start();
    await waitFor(() => worker.infos.some((line) => line.startsWith('complete')), { what: 'completion' });
    expect(worker.processed).toEqual(ITEMS);
    expect(worker.infos.filter((line) => line.startsWith('resume')).length).toBeGreaterThan(0);
    expect(await redis().zcard('retry')).toBe(0);
    expect(await redis().exists(Keys.iteration(jid))).toBe(0);
  });
});
