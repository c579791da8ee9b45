import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { Test, TestingModule } from '@nestjs/testing';
import { ClientService, InvalidJobError, ServerContext, Worker } from '../../src';
import { WurkTesting, WurkTestingModule } from '../../src/entries/testing';
import { rejectedBy } from '../support/config-error';

const SECRET = { ssn: '123-45-6789' };
const runs: unknown[][] = [];
/** The last argument as the app's server middleware sees it (outside the opening, which runs innermost). */
const seenByMiddleware: unknown[] = [];

@Worker({ encrypt: true })
class ChargeCard {
  perform(...args: unknown[]): void {
    runs.push(args);
  }
}

async function compile(mode: 'fake' | 'inline', withKeys = true): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      WurkTestingModule.forRoot({
        mode,
        serverMiddleware: [(context: ServerContext, next) => (seenByMiddleware.push(context.job.args[1]), next())],
        ...(withKeys ? { encryption: { keys: { 1: randomBytes(32) }, current: 1 } } : {}),
      }),
    ],
    providers: [ChargeCard],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

beforeEach(() => {
  runs.length = 0;
  seenByMiddleware.length = 0;
});

describe('WurkTestingModule and encrypted jobs: sealed as in Redis, opened before perform', () => {
  it('fake mode collects the sealed argument, and drain runs perform with the clear one', async () => {
    const moduleRef = await compile('fake');
    try {
      await moduleRef.get(ClientService).performAsync(ChargeCard, 7, SECRET);
      const [job] = moduleRef.get(WurkTesting).jobs(ChargeCard);
      expect(job.args).toEqual([7, expect.objectContaining({ __wurk_enc__: true, v: 1 })]);
      expect(job.payload.toString()).not.toContain('123-45-6789');
      await moduleRef.get(WurkTesting).drain();
      expect(runs).toEqual([[7, SECRET]]);
    } finally {
      await moduleRef.close();
    }
  });

  it('inline mode runs perform with the clear argument', async () => {
    const moduleRef = await compile('inline');
    try {
      await moduleRef.get(ClientService).performAsync(ChargeCard, 8, SECRET);
      expect(seenByMiddleware).toEqual([expect.objectContaining({ __wurk_enc__: true, v: 1 })]);
      expect(runs).toEqual([[8, SECRET]]);
    } finally {
      await moduleRef.close();
    }
  });

  it('with no keys, refuses the push naming encrypt, as the real module does', async () => {
    const moduleRef = await compile('fake', false);
    try {
      const error = await rejectedBy(InvalidJobError, () =>
        moduleRef.get(ClientService).performAsync(ChargeCard, 9, SECRET),
      );
      expect(error.field).toBe('encrypt');
      expect(moduleRef.get(WurkTesting).jobs()).toEqual([]);
    } finally {
      await moduleRef.close();
    }
  });
});
