import { Client } from '../../src/client/client';
import type { PushTransport } from '../../src/client/push-transport';
import { defineWorker } from '../../src/job/worker-definition';
import type { WurkServerOptions } from '../../src/config/server-group';
import { resolveOptions } from '../../src/nest/wurk-options';
import {
  capsuleDefaultQueues,
  capsuleGroups,
  capsuleHeartbeatInfo,
  checkWorkerCapsule,
} from '../../src/server/capsules';
import { configError } from '../support/config-error';

/** `server` options, resolved as WurkModule.forRoot({ server }) would. */
const resolveServer = (server: WurkServerOptions) => resolveOptions({ server });

/** The capsules option and @Worker({ capsule }): checked at start-up, each error naming the option. */
describe('capsule options', () => {
  it('refuses a queue in two groups, naming the capsule option and the other group', () => {
    const overlap = configError(() =>
      resolveServer({ queues: ['default', 'mail'], capsules: [{ name: 'slow', queues: ['reports', 'mail'] }] }),
    );
    expect(overlap.option).toBe('server.capsules[0].queues');
    expect(overlap.message).toContain('"mail"');
    expect(overlap.message).toContain('capsule "default"');
    const twice = configError(() =>
      resolveServer({
        capsules: [
          { name: 'a', queues: ['x'] },
          {
            name: 'b',
            queues: [
              ['y', 2],
              ['x', 1],
            ],
          },
        ],
      }),
    );
    expect(twice.option).toBe('server.capsules[1].queues');
    expect(twice.message).toContain('capsule "a"');
  });

  it('checks each capsule like an option object: required keys, types, unknown keys, names', () => {
    expect(configError(() => resolveServer({ capsules: [{ queues: ['x'] } as never] })).option).toBe(
      'server.capsules[0].name',
    );
    expect(configError(() => resolveServer({ capsules: [{ name: 'slow' } as never] })).option).toBe(
      'server.capsules[0].queues',
    );
    expect(
      configError(() => resolveServer({ capsules: [{ name: 'slow', queues: ['x'], concurrency: 0 }] })).option,
    ).toBe('server.capsules[0].concurrency');
    const typo = configError(() =>
      resolveServer({ capsules: [{ name: 'slow', queues: ['x'], concurency: 2 } as never] }),
    );
    expect(typo.option).toBe('server.capsules[0].concurency');
    expect(typo.message).toContain('concurrency');
    expect(configError(() => resolveServer({ capsules: [{ name: 'default', queues: ['x'] }] })).option).toBe(
      'server.capsules[0].name',
    );
    expect(
      configError(() =>
        resolveServer({
          capsules: [
            { name: 'a', queues: ['x'] },
            { name: 'a', queues: ['y'] },
          ],
        }),
      ).option,
    ).toBe('server.capsules[1].name');
    expect(configError(() => resolveServer({ capsules: [{ name: 'a', queues: [] }] })).option).toBe(
      'server.capsules[0].queues',
    );
    expect(configError(() => resolveServer({ capsules: { name: 'a' } as never })).option).toBe('server.capsules');
  });

  it("a capsule's concurrency defaults to the top-level one; the heartbeat sums them and keeps one weight hash per capsule", () => {
    const groups = capsuleGroups(
      [
        ['critical', 3],
        ['default', 1],
      ],
      4,
      [
        { name: 'slow', queues: ['reports'] },
        { name: 'one', queues: ['a', 'b'], concurrency: 1 },
      ],
    );
    expect(groups.map((group) => [group.name, group.concurrency])).toEqual([
      ['default', 4],
      ['slow', 4],
      ['one', 1],
    ]);
    expect(capsuleHeartbeatInfo(groups)).toEqual({
      concurrency: 9,
      queues: ['critical', 'default', 'reports', 'a', 'b'],
      weights: [{ critical: 3, default: 1 }, { reports: 0 }, { a: 0, b: 0 }],
      capsules: [
        { name: 'default', concurrency: 4 },
        { name: 'slow', concurrency: 4 },
        { name: 'one', concurrency: 1 },
      ],
    });
  });

  it('a worker naming a capsule must name one that exists, and a queue of that capsule', () => {
    const groups = capsuleGroups(['default'], 5, [{ name: 'slow', queues: ['reports', 'exports'] }]);
    expect(() => checkWorkerCapsule('Report', 'slow', undefined, groups)).not.toThrow();
    expect(() => checkWorkerCapsule('Report', 'slow', 'exports', groups)).not.toThrow();
    expect(configError(() => checkWorkerCapsule('Report', 'slw', undefined, groups)).option).toBe(
      '@Worker(Report).capsule',
    );
    const wrongQueue = configError(() => checkWorkerCapsule('Report', 'slow', 'default', groups));
    expect(wrongQueue.option).toBe('@Worker(Report).queue');
    expect(wrongQueue.message).toContain('reports, exports');
  });

  it("pushes a worker that names its capsule and no queue to the capsule's first queue", async () => {
    class ReportWorker {
      perform(): void {}
    }
    defineWorker(ReportWorker, { capsule: 'slow' });
    const pushed: string[] = [];
    const transport: PushTransport = { write: async (jobs) => void pushed.push(...jobs.map((job) => job.queue)) };
    const groups = capsuleGroups(['default'], 5, [{ name: 'slow', queues: ['reports', 'exports'] }]);
    const client = new Client(transport, { timestamps: 'seconds', capsuleQueues: capsuleDefaultQueues(groups) });
    await client.performAsync(ReportWorker);
    await client.set({ queue: 'exports' }).performAsync(ReportWorker);
    expect(pushed).toEqual(['reports', 'exports']);
    const bare = new Client(transport, { timestamps: 'seconds' });
    await expect(bare.performAsync(ReportWorker)).rejects.toThrow(/capsule/);
  });
});
