import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { JobPayload, Worker, WurkModule } from '../../src';
import { uniqueDigest } from '../../src/entries/internals';
import { rubyFloat, rubyJson } from '../../src/job/ruby-json';
import { usePrivateRedis } from '../support/private-redis';
import { runRuby, SIDEKIQ_VERSIONS } from '../support/sidekiq';
import { waitFor } from '../support/wait';

/** Args texts as producers write them: Ruby floats, digits beyond 2^53, unicode, escapes, key order, white space. */
const ARGS_TEXTS = [
  '[1.0,2,"x"]',
  '[1.5e-07,1e20,1.0e+16,1000000000000000.0,0.0001,0.00001,123456789.125,-0.0,-2.5]',
  '[123456789012345678901234567890,-9007199254740993]',
  '["héllo ✓ 😀","tab\\tnew\\nline","quote\\"back\\\\slash","\\u0001\\u001f","sl\\/ash","\\u00e9\\u2028"]',
  '[{"b":1,"1":2,"a":{"z":[true,false,null]}}]',
  '[ 1 , { "k" : [ 1.0 , 2 ] } ]',
  '[]',
  '[0.1,0.30000000000000004,1e-4,2.5e+300,5e-324]',
];

describe("unique-job digests equal Ruby's JSON.generate", () => {
  const server = usePrivateRedis();

  it('for every args text, class and queue, wurk and Ruby name the same lock', async () => {
    const ruby = await runRuby<string[]>(
      `require 'digest'
       cases = JSON.parse(ENV['CASES'])
       puts JSON.generate(cases.map { |c| Digest::SHA256.hexdigest(JSON.generate([c['class'], c['queue'], JSON.parse(c['args'])])) })`,
      server.url,
      {
        CASES: JSON.stringify(
          ARGS_TEXTS.map((args, index) => ({ class: index % 2 ? 'Billing::Invoice' : 'Ünï', queue: 'q', args })),
        ),
      },
    );
    const ours = ARGS_TEXTS.map((args, index) =>
      uniqueDigest(
        JobPayload.parse(
          `{"class":${JSON.stringify(index % 2 ? 'Billing::Invoice' : 'Ünï')},"queue":"q","args":${args}}`,
        ),
      ),
    );
    expect(ours).toEqual(ruby);
  });

  it('floats print as Ruby prints them', async () => {
    const values = [
      1, 1.5e-7, 1e20, 1e16, 1e15, 1e14, 1234567890123456.7, 1234567890123456, 9.999e15, 0.001, 0.0001, 0.00012345,
      0.00001, 123456789.125, -0, -2.5, 0.1, 2.5e300, 5e-324, 1e100, 12345678901234567,
    ];
    const ruby = await runRuby<string[]>(
      `puts JSON.generate(JSON.parse(ENV['V']).map { |v| v.to_f.to_s })`,
      server.url,
      { V: JSON.stringify(values) },
    );
    // JSON.parse above reads -0 as 0 (an Integer); Ruby's -0.0.to_s is "-0.0", ours too.
    expect(values.map(rubyFloat)).toEqual(ruby.map((text, index) => (Object.is(values[index], -0) ? '-0.0' : text)));
    expect(rubyJson('[1.0, 10, {"a" : 1e2}]')).toBe('[1.0,10,{"a":100.0}]');
  });

  describe('a unique job pushed by Ruby runs on wurk and releases the lock Ruby took', () => {
    let app: INestApplicationContext;
    const ran: unknown[][] = [];

    @Worker({ name: 'Mailer::Digest', queue: 'mail' })
    class RubyUniqueJob {
      perform(...args: unknown[]): void {
        ran.push(args);
      }
    }

    beforeAll(async () => {
      @Module({
        imports: [WurkModule.forRoot({ redis: { url: server.url }, queues: ['mail'], shutdownTimeout: 2 })],
        providers: [RubyUniqueJob],
      })
      class AppModule {}
      app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
      await app.init();
    });
    afterAll(async () => {
      await app?.close();
    });

    it.each(SIDEKIQ_VERSIONS)(
      'the lock named by Ruby’s digest is released when wurk finishes the job Sidekiq $version pushed',
      async (version) => {
        ran.length = 0;
        // What Ruby Wurk's client does for a unique push: SET NX the lock for the jid, then push.
        const pushed = await runRuby<{ jid: string; key: string }>(
          `require 'digest'; require 'securerandom'
         args = [1.0, {"user" => 42, "tags" => ["a", "é"]}]
         key = "unique:" + Digest::SHA256.hexdigest(JSON.generate(["Mailer::Digest", "mail", args]))
         jid = SecureRandom.hex(12)
         Sidekiq.redis { |r| r.set(key, jid, nx: true, ex: 600) }
         Sidekiq::Client.push("class" => "Mailer::Digest", "queue" => "mail", "args" => args, "unique_for" => 600, "jid" => jid)
         puts JSON.generate({ jid: jid, key: key })`,
          server.url,
          {},
          version,
        );
        await waitFor(() => ran.length === 1, { what: 'the Ruby job to run on wurk' });
        await waitFor(async () => (await server.redis.exists(pushed.key)) === 0, {
          what: "Ruby's lock to be released",
        });
        expect(ran[0]).toEqual([1, { user: 42, tags: ['a', 'é'] }]);
      },
    );
  });
});
