import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { SandboxThreadDiedError, SandboxTerminatedError } from '../../src/server/sandbox/sandbox-errors';
import { SandboxPool, SandboxPoolSpec } from '../../src/server/sandbox/sandbox-pool';
import { waitFor } from '../support/wait';

const FIXTURE = join(__dirname, '..', 'support', 'sandbox-workers.ts');

/** The sandbox executor on its own: threads, errors, termination, replacement; no Redis involved. */
describe('SandboxPool', () => {
  const pools: SandboxPool[] = [];
  const pool = (spec: Partial<SandboxPoolSpec> = {}) => {
    const built = new SandboxPool({
      workerName: 'ThreadReportJob',
      file: FIXTURE,
      exportName: 'ThreadReportJob',
      size: 1,
      graceMs: 200,
      ...spec,
    });
    pools.push(built);
    return built;
  };
  const never = new AbortController().signal;
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((built) => built.close()));
  });

  it('performs in another thread and returns the structured-clone result', async () => {
    const result = (await pool().run(['ok'], never)) as { threadId: number; kind: string };
    expect(result.kind).toBe('ok');
    expect(result.threadId).not.toBe(threadId);
  });

  it("rejects with perform's error class, message and the thread's stack", async () => {
    const error = (await pool()
      .run(['fail'], never)
      .catch((caught: unknown) => caught)) as Error;
    expect(error.name).toBe('ReportFailedError');
    expect(error.message).toBe('the report could not be built');
    expect(error.stack).toContain('sandbox-workers.ts');
  });

  it('terminates a busy thread past the grace once the signal fires, and the next job gets a new thread', async () => {
    const sandbox = pool({ graceMs: 100 });
    const first = (await sandbox.run(['ok'], never)) as { threadId: number };
    const abort = new AbortController();
    const started = Date.now();
    const running = sandbox.run(['busy', 60000], abort.signal).catch((caught: unknown) => caught);
    abort.abort(new Error('deadline passed'));
    const error = await running;
    expect(error).toBeInstanceOf(SandboxTerminatedError);
    expect((error as Error).message).toContain('deadline passed');
    // The busy loop would run 60 s: only a terminated thread frees the job this soon.
    expect(Date.now() - started).toBeLessThan(5000);
    await waitFor(() => sandbox.size === 0, { what: 'the terminated thread to leave the pool' });
    const next = (await sandbox.run(['ok'], never)) as { threadId: number };
    expect(next.threadId).not.toBe(first.threadId);
  });

  it('lets a perform that returns within the grace finish normally', async () => {
    const abort = new AbortController();
    const running = pool({ graceMs: 3000 }).run(['busy', 300], abort.signal);
    abort.abort();
    await expect(running).resolves.toMatchObject({ kind: 'busy' });
  });

  it.each([
    ['exit', /exit code 3/],
    ['uncaught', /thrown outside the perform promise/],
  ])('fails only the job whose thread dies (%s) and replaces the thread', async (kind, cause) => {
    const sandbox = pool();
    const first = (await sandbox.run(['ok'], never)) as { threadId: number };
    const error = await sandbox.run([kind], never).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SandboxThreadDiedError);
    expect((error as Error).message).toMatch(cause);
    const next = (await sandbox.run(['ok'], never)) as { threadId: number };
    expect(next.threadId).not.toBe(first.threadId);
  });

  it('queues a job beyond the pool size until a thread is free', async () => {
    const sandbox = pool({ size: 1 });
    const results = await Promise.all([sandbox.run(['busy', 100], never), sandbox.run(['ok'], never)]);
    expect(results.map((result) => (result as { kind: string }).kind)).toEqual(['busy', 'ok']);
    expect(sandbox.size).toBe(1);
  });

  it('start() refuses a module the thread cannot load, with the reason', async () => {
    const unloadable = pool({
      file: join(__dirname, '..', 'support', 'sandbox-unloadable.ts'),
      exportName: 'UnloadableSandboxJob',
    });
    await expect(unloadable.start()).rejects.toThrow(/only the main thread has/);
    const missing = pool({ exportName: 'NoSuchJob' });
    await expect(missing.start()).rejects.toThrow(/does not export a class named NoSuchJob/);
  });

  it('close() terminates idle threads and refuses new jobs', async () => {
    const sandbox = pool({ size: 2 });
    await Promise.all([sandbox.run(['busy', 50], never), sandbox.run(['ok'], never)]);
    expect(sandbox.size).toBe(2);
    await sandbox.close();
    expect(sandbox.size).toBe(0);
    await expect(sandbox.run(['ok'], never)).rejects.toThrow(/sandbox pool closed/);
  });
});
