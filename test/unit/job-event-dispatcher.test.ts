import { JobPayload } from '../../src/job/payload';
import { JobEventDispatcher } from '../../src/server/job-events';
import type { ServerContext } from '../../src/server/server-middleware';
import { waitFor } from '../support/wait';

const JID = 'b'.repeat(24);

function context(): ServerContext {
  return {
    job: JobPayload.parse(`{"class":"MailJob","args":[],"jid":"${JID}","queue":"mail"}`),
    queue: 'mail',
    attempt: 1,
    execution: {} as ServerContext['execution'],
  };
}

/** @OnJobEvent handlers as the processor calls them: after its turn, and never able to break a job. */
describe('JobEventDispatcher', () => {
  it('calls each handler of the event a microtask later with the job it is about', async () => {
    const dispatcher = new JobEventDispatcher({ log: () => undefined, warn: () => undefined, error: () => undefined });
    const seen: string[] = [];
    dispatcher.on(
      'started',
      (event) => void seen.push(`${event.event} ${event.className} ${event.jid} ${event.queue} ${event.attempt}`),
    );
    dispatcher.onStart(context());
    expect(seen).toEqual([]);
    await waitFor(() => seen.length === 1, { what: 'the handler' });
    expect(seen).toEqual([`started MailJob ${JID} mail 1`]);
  });

  it('logs a handler that throws or rejects, naming the event and the job, and still calls the others', async () => {
    const errors: string[] = [];
    const dispatcher = new JobEventDispatcher({
      log: () => undefined,
      warn: () => undefined,
      error: (line) => void errors.push(line),
    });
    const calls: string[] = [];
    dispatcher.on('completed', () => {
      throw new Error('handler bug');
    });
    dispatcher.on('completed', async () => Promise.reject(new Error('async handler bug')));
    dispatcher.on('completed', () => void calls.push('third'));
    dispatcher.onSettled(context(), { kind: 'complete', result: 1 });
    await waitFor(() => errors.length === 2 && calls.length === 1, { what: 'the handlers' });
    expect(errors.sort()).toEqual([
      `job event handler for completed of ${JID} failed (ignored): async handler bug`,
      `job event handler for completed of ${JID} failed (ignored): handler bug`,
    ]);
  });
});
