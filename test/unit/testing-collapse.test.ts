import 'reflect-metadata';
import { Test, TestingModule } from '@nestjs/testing';
import { ClientService, Worker } from '../../src';
import { WurkTesting, WurkTestingModule } from '../../src/entries/testing';
import { recordConnections } from '../../sample/test/no-network';

@Worker({ queue: 'index', collapse: { policy: 'debounce', wait: 30 } })
class Reindex {
  perform(id: number): void {
    void id;
  }
}

// The testing module reaches no Redis, so it cannot collapse.
const connects = recordConnections();
afterAll(() => expect(connects).toEqual([]));

/** The testing module records collapsed pushes as ordinary jobs (docs/debounce.md), and still refuses bad policies. */
describe.each(['fake', 'inline'] as const)('WurkTestingModule and collapse (%s mode)', (mode) => {
  let moduleRef: TestingModule;
  let client: ClientService;
  let wurk: WurkTesting;
  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [WurkTestingModule.forRoot({ mode })],
      providers: [Reindex],
    }).compile();
    await moduleRef.init();
    client = moduleRef.get(ClientService);
    wurk = moduleRef.get(WurkTesting);
  });
  afterEach(() => moduleRef.close());

  it('does not collapse: every push resolves to its jid and is recorded, the policy kept in the payload', async () => {
    const first = await client.performAsync(Reindex, 1);
    const second = await client.performAsync(Reindex, 1);
    expect(first).toMatch(/^[0-9a-f]{24}$/);
    expect(second).toMatch(/^[0-9a-f]{24}$/);
    if (mode === 'fake') {
      expect(wurk.jobs(Reindex).map((job) => job.jid)).toEqual([first, second]);
      expect(wurk.jobs(Reindex)[0].payload.get('collapse')).toEqual({ policy: 'debounce', wait: 30 });
    }
  });

  it('refuses what production refuses, naming the member', async () => {
    await expect(client.performIn(60, Reindex, 1)).rejects.toMatchObject({ field: 'collapse' });
    await expect(
      client.push({ class: 'Ruby::Job', args: [], collapse: { policy: 'throttle', slot: 0.5 } }),
    ).rejects.toMatchObject({ field: 'collapse.slot' });
    await expect(
      client.pushBulk({ class: 'Ruby::Job', args: [[1]], collapse: { policy: 'throttle', slot: 5 } }),
    ).rejects.toMatchObject({ field: 'collapse' });
    if (mode === 'fake') expect(wurk.jobs()).toEqual([]);
  });
});
