import { SIDEKIQ_VERSIONS, useSidekiqRuby } from '../support/sidekiq';
import { usePrivateRedis } from '../support/private-redis';
import { usePoller } from '../support/server-harness';

interface RubyDeadEntry {
  klass: string;
  args: unknown[];
  error_class: string;
  error_message: string;
}

/**
 * Every dead entry as Sidekiq's API reads it, and, where the version's Web UI
 * runs here (not 8.x: README, interop), the Dead page's HTTP status and
 * whether it shows the class.
 */
const readDead = (webUi: boolean) => `
entries = Sidekiq::DeadSet.new.map { |e| { klass: e.klass, args: e.args, error_class: e['error_class'], error_message: e['error_message'] } }
page = nil
if ${webUi}
  require 'rack/mock'
  require 'sidekiq/web'
  app = Rack::Builder.new { use Rack::Session::Cookie, secret: 'x' * 64; run Sidekiq::Web }
  page = Rack::MockRequest.new(app).get('/morgue')
end
puts JSON.generate(entries: entries, page_status: page&.status, page_shows_class: page&.body&.include?('Wurk::InvalidPayload'))
`;

describe.each(SIDEKIQ_VERSIONS)(
  "what wurk files in dead is readable by Sidekiq $version's DeadSet and Dead page",
  (version) => {
    const server = usePrivateRedis({ flushBeforeEach: true });
    const ruby = useSidekiqRuby(version, server);
    const poller = usePoller(server);

    it('the poller wraps a member of schedule or retry that is not a job (or not UTF-8) as Wurk::InvalidPayload', async () => {
      const redis = server.redis;
      const past = String(Date.now() / 1000 - 10);
      await redis.zadd('schedule', past, 'garbage', past, '[1,2]', past, '{"class":"X","args":[]}');
      await redis.zadd('retry', past, '{"class":"Y","args":[1],"queue":"default","jid":"a"');
      // Bytes that are not UTF-8: Sidekiq itself could not read them, wrapped or not, unless kept as base64.
      const bytes = Buffer.from([0x7b, 0xff, 0x7d]);
      await redis.zadd('retry', past, bytes);
      await poller().poll();
      expect(await redis.zcard('schedule')).toBe(0);
      expect(await redis.zcard('retry')).toBe(0);

      const read = await ruby.run<{
        entries: RubyDeadEntry[];
        page_status: number | null;
        page_shows_class: boolean | null;
      }>(readDead(version.webUi));
      expect([read.page_status, read.page_shows_class]).toEqual(version.webUi ? [200, true] : [null, null]);
      const byArg = new Map(read.entries.map((entry) => [entry.args[0], entry]));
      expect(new Set(byArg.keys())).toEqual(
        new Set([
          '[1,2]',
          '{"class":"X","args":[]}',
          '{"class":"Y","args":[1],"queue":"default","jid":"a"',
          'garbage',
          bytes.toString('base64'),
        ]),
      );
      expect(byArg.get(bytes.toString('base64'))?.error_message).toBe(
        'invalid job payload: member of retry is not valid UTF-8 (its bytes are kept base64-encoded in args[0])',
      );
      for (const entry of read.entries)
        expect(entry).toMatchObject({ klass: 'Wurk::InvalidPayload', error_class: 'InvalidPayloadError' });
      expect(byArg.get('garbage')?.error_message).toBe('invalid job payload: member of schedule is not valid JSON');
      expect(byArg.get('[1,2]')?.error_message).toBe('invalid job payload: member of schedule is not a JSON object');
      expect(byArg.get('{"class":"X","args":[]}')?.error_message).toBe(
        'invalid job payload: member of schedule names no queue',
      );
      expect(byArg.get('{"class":"Y","args":[1],"queue":"default","jid":"a"')?.error_message).toBe(
        'invalid job payload: member of retry is not valid JSON',
      );
    });
  },
);
