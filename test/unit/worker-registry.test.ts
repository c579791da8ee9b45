import { WurkConfigError } from '../../src/job/errors';
import { WorkerRegistry } from '../../src/job/worker-registry';

class SendMail {
  perform(): void {}
}
class OtherSendMail {
  perform(): void {}
}
class Lazy {}

describe('WorkerRegistry', () => {
  it('finds a registered worker by its Sidekiq class string and lists them all', () => {
    const registry = new WorkerRegistry();
    const mail = { name: 'Mailer::Send', target: SendMail, options: {}, instance: new SendMail() };
    const other = { name: 'Other', target: OtherSendMail, options: {}, instance: new OtherSendMail() };
    registry.register(mail);
    registry.register(other);
    expect(registry.get('Mailer::Send')).toBe(mail);
    expect(registry.get('SendMail')).toBeUndefined();
    expect(registry.all()).toEqual([mail, other]);
  });

  it('takes the same class again (a module imported twice) and keeps one entry', () => {
    const registry = new WorkerRegistry();
    registry.register({ name: 'SendMail', target: SendMail, options: {}, instance: new SendMail() });
    const again = { name: 'SendMail', target: SendMail, options: { queue: 'mail' }, instance: new SendMail() };
    registry.register(again);
    expect(registry.all()).toEqual([again]);
  });

  it('refuses a second class under a taken name, naming both classes', () => {
    const registry = new WorkerRegistry();
    registry.register({ name: 'SendMail', target: SendMail, options: {}, instance: new SendMail() });
    expect(() =>
      registry.register({ name: 'SendMail', target: OtherSendMail, options: {}, instance: new OtherSendMail() }),
    ).toThrow(
      new WurkConfigError(
        '@Worker(SendMail)',
        'is declared twice: by SendMail and by OtherSendMail; give one a different name',
      ),
    );
  });

  it('refuses a class without a perform() method, naming it', () => {
    const registry = new WorkerRegistry();
    const register = (instance: unknown) => () =>
      registry.register({ name: 'Lazy', target: Lazy as never, options: {}, instance: instance as never });
    expect(register(new Lazy())).toThrow(new WurkConfigError('@Worker(Lazy)', 'Lazy has no perform() method'));
    expect(register(undefined)).toThrow(new WurkConfigError('@Worker(Lazy)', 'Lazy has no perform() method'));
    expect(registry.get('Lazy')).toBeUndefined();
  });
});
