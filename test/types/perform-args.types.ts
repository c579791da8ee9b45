/**
 * Compile-time checks of the public API, compiled by `npm test` (tsc --noEmit):
 * each @ts-expect-error line must be an error, or the compile fails.
 */
import { ClientService, Worker } from '../../src';

@Worker({ queue: 'mail' })
class MailWorker {
  perform(to: string, attempts: number, options?: { cc: string[] }): void {
    void to;
    void attempts;
    void options;
  }
}

export async function typeChecks(client: ClientService): Promise<void> {
  await client.performAsync(MailWorker, 'a@b.c', 3);
  await client.performAsync(MailWorker, 'a@b.c', 3, { cc: ['x'] });
  await client.performIn(60, MailWorker, 'a@b.c', 1);
  await client.performAt(new Date(), MailWorker, 'a@b.c', 1);
  await client.set({ queue: 'low' }).performAsync(MailWorker, 'a@b.c', 2);
  const jid: string | null = await client.push({ class: 'RubyWorker', args: [1] });
  const jids: (string | null)[] = await client.pushBulk({ class: 'RubyWorker', args: [[1], [2]] });
  void jid;
  void jids;

  // @ts-expect-error a number where perform takes a string
  await client.performAsync(MailWorker, 42, 3);
  // @ts-expect-error a missing required argument
  await client.performAsync(MailWorker, 'a@b.c');
  // @ts-expect-error one argument too many
  await client.performIn(5, MailWorker, 'a@b.c', 1, { cc: [] }, 'extra');
  // @ts-expect-error a wrongly shaped option object
  await client.performAt(0, MailWorker, 'a@b.c', 1, { cc: 'x' });
  // @ts-expect-error per-call overrides cannot rename the class
  client.set({ name: 'Other' });
  // @ts-expect-error push needs args
  await client.push({ class: 'RubyWorker' });
}

// Worker options are a closed type: a misspelt Sidekiq option is a compile
// error, not a member copied into every payload. Extra members go in `custom`.
@Worker({ queue: 'mail', retry: 5, custom: { lock: 'until_executed', owner: 'billing' } })
export class CustomMembersWorker {
  perform(): void {}
}

// @ts-expect-error `retires` is not a worker option (retry)
@Worker({ retires: 5 })
export class RetiresTypo {
  perform(): void {}
}

// @ts-expect-error `trak` is not a worker option (track)
@Worker({ trak: true })
export class TrakTypo {
  perform(): void {}
}

export function overrideChecks(client: ClientService): void {
  client.set({ custom: { lock: 'while_executing' } });
  // @ts-expect-error per-call overrides are closed too
  client.set({ queu: 'low' });
}

export async function scheduleChecks(client: ClientService): Promise<void> {
  await client.performIn({ minutes: 5 }, MailWorker, 'a@b.c', 1);
  await client.set({ queue: 'low' }).performIn({ hours: 1, minutes: 30 }, MailWorker, 'a@b.c', 1);
  // @ts-expect-error a duration unit that does not exist
  await client.performIn({ mins: 5 }, MailWorker, 'a@b.c', 1);
}
