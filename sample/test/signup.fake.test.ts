import 'reflect-metadata';
import { TestingModule } from '@nestjs/testing';
import { ClientService } from '../../src';
import { WurkTesting } from '../../src/entries/testing';
import { SignupController } from '../signup.controller';
import { InvoiceWorker } from '../workers/invoice.worker';
import { Mailer, WelcomeMailWorker } from '../workers/welcome-mail.worker';
import { recordConnections } from './no-network';
import { sampleWithoutRedis } from './without-redis';

/**
 * Fake mode: the app's own module, with its wurk import swapped for the
 * testing module. Pushes are collected, the test asserts on them, and
 * `drain` performs them through the app's server middleware.
 */
describe('sign-up (wurk fake mode)', () => {
  const connections = recordConnections();
  let moduleRef: TestingModule;
  let wurk: WurkTesting;
  const sent: string[] = [];

  beforeEach(async () => {
    sent.length = 0;
    moduleRef = await sampleWithoutRedis({ mode: 'fake' })
      .overrideProvider(Mailer)
      .useValue({ send: async (to: string, subject: string) => void sent.push(`${to}: ${subject}`) })
      .compile();
    await moduleRef.init();
    wurk = moduleRef.get(WurkTesting);
  });
  afterEach(() => moduleRef.close());

  it('enqueues the welcome mail, its reminder and the invoice, and sends nothing until drained', async () => {
    await moduleRef.get(SignupController).signUp({ email: 'ann@example.com', name: 'Ann' });

    wurk.expectEnqueued(WelcomeMailWorker, 'ann@example.com', 'Ann');
    const reminder = wurk.expectEnqueued(WelcomeMailWorker, 'ann@example.com', 'Ann (one hour later)');
    expect(reminder.at).toBeGreaterThan(Date.now() / 1000 + 3500);
    expect(wurk.expectEnqueued(InvoiceWorker, 42, 1999).queue).toBe('critical');
    expect(wurk.jobs('ruby').map((job) => job.className)).toEqual(['HardWorker']);
    expect(wurk.jobs('billing')).toHaveLength(3);
    expect(sent).toEqual([]);

    const report = await wurk.drain(WelcomeMailWorker);
    expect(report.failures).toEqual([]);
    expect(sent).toEqual(['ann@example.com: Welcome, Ann!', 'ann@example.com: Welcome, Ann (one hour later)!']);
  });

  it('reports a failing job as production would file it, without retrying it', async () => {
    await moduleRef.get(SignupController).signUp({ email: 'bob@example.com', name: 'Bob' });
    wurk.clear();
    await moduleRef.get(ClientService).performAsync(InvoiceWorker, 7, -1);
    const { failures } = await wurk.drain();
    expect(failures.map(({ job, error, outcome }) => [job.className, (error as Error).message, outcome.kind])).toEqual([
      ['Billing::InvoiceJob', 'invoice for account 7 has a negative amount', 'retrying'],
    ]);
    expect(wurk.jobs()).toEqual([]);
  });

  afterAll(() => expect(connections).toEqual([]));
});
