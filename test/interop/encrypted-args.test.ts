import { randomBytes } from 'node:crypto';
import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientService, Worker, WurkModule } from '../../src';
import type { WurkModuleOptions } from '../../src';
import { usePrivateRedis } from '../support/private-redis';
import { runRuby } from '../support/sidekiq';
import { waitFor } from '../support/wait';

const KEYS = { 3: randomBytes(32), 4: randomBytes(32) };
const SECRET = { pan: '4111 1111 1111 1111', cvv: '123', note: 'héllo ✓', amount: 12.5, tags: ['a', null] };
const runs: unknown[][] = [];

@Worker({ queue: 'interop-run', encrypt: true })
class ChargeCard {
  perform(...args: unknown[]): void {
    runs.push(args);
  }
}

/** The key versions and their keys as hex, for the Ruby side. */
const KEYS_ENV = JSON.stringify(Object.fromEntries(Object.entries(KEYS).map(([v, key]) => [v, key.toString('hex')])));

/**
 * The steps Wurk's Ruby `Wurk::Encryption` (lib/wurk/encryption.rb) takes, written out with OpenSSL: the envelope
 * `{"__wurk_enc__"=>true,"v","iv","ct","tag"}` with strict base64, AES-256-GCM over `JSON.dump(value)`, a 12-byte IV
 * and a 16-byte tag.
 */
const RUBY_CRYPTO = `
  require 'openssl'; require 'base64'
  KEYS = JSON.parse(ENV['KEYS']).to_h { |v, hex| [Integer(v), [hex].pack('H*')] }
  def seal(value, version)
    cipher = OpenSSL::Cipher.new('aes-256-gcm').encrypt
    cipher.key = KEYS.fetch(version)
    iv = OpenSSL::Random.random_bytes(12)
    cipher.iv = iv
    ct = cipher.update(JSON.dump(value)) + cipher.final
    { '__wurk_enc__' => true, 'v' => version, 'iv' => Base64.strict_encode64(iv),
      'ct' => Base64.strict_encode64(ct), 'tag' => Base64.strict_encode64(cipher.auth_tag(16)) }
  end
  def open_sealed(envelope)
    cipher = OpenSSL::Cipher.new('aes-256-gcm').decrypt
    cipher.key = KEYS.fetch(Integer(envelope['v']))
    cipher.iv = Base64.strict_decode64(envelope['iv'])
    cipher.auth_tag = Base64.strict_decode64(envelope['tag'])
    JSON.parse(cipher.update(Base64.strict_decode64(envelope['ct'])) + cipher.final, quirks_mode: true)
  end
`;

describe("encrypted args interoperate with Wurk's Ruby format (AES-256-GCM, the __wurk_enc__ envelope)", () => {
  const server = usePrivateRedis();
  let app: INestApplicationContext;

  async function startApp(options: WurkModuleOptions): Promise<INestApplicationContext> {
    @Module({ imports: [WurkModule.forRoot(options)], providers: [ChargeCard] })
    class AppModule {}
    const created = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
    await created.init();
    return created;
  }

  beforeAll(async () => {
    app = await startApp({
      redis: { url: server.url },
      encryption: { keys: { 3: KEYS[3], 4: KEYS[4].toString('hex') }, current: 4 },
      server: { queues: ['interop-run'], concurrency: 1, pollInterval: 0.2, shutdownTimeout: 2 },
    });
  });
  afterAll(() => app?.close());

  it('a payload sealed by wurk opens with the documented Ruby steps', async () => {
    const jid = await app
      .get(ClientService)
      .set({ queue: 'interop-parked' })
      .performAsync(ChargeCard, 'order-7', SECRET);
    const ruby = await runRuby<{ jid: string; version: number; first: unknown; opened: unknown; clear: boolean }>(
      `${RUBY_CRYPTO}
       job = Sidekiq::Queue.new('interop-parked').first.item
       puts JSON.generate({ jid: job['jid'], version: job['args'].last['v'], first: job['args'].first,
                            opened: open_sealed(job['args'].last), clear: Sidekiq.redis { |c| c.lrange('queue:interop-parked', 0, -1) }.join.include?('4111') })`,
      server.url,
      { KEYS: KEYS_ENV },
    );
    expect(ruby).toEqual({ jid, version: 4, first: 'order-7', opened: SECRET, clear: false });
  });

  it('a payload sealed by the Ruby steps runs on wurk with the clear argument, older key version included', async () => {
    runs.length = 0;
    const jids = await runRuby<string[]>(
      `${RUBY_CRYPTO}
       secret = JSON.parse(ENV['SECRET'])
       puts JSON.generate([3, 4].map { |v|
         Sidekiq::Client.push('class' => 'ChargeCard', 'queue' => 'interop-run', 'encrypt' => true,
                              'args' => ["from ruby v#{v}", seal(secret, v)]) })`,
      server.url,
      { KEYS: KEYS_ENV, SECRET: JSON.stringify(SECRET) },
    );
    expect(jids).toHaveLength(2);
    await waitFor(() => runs.length === 2, { what: 'both Ruby-sealed jobs to run' });
    expect(runs).toEqual(
      expect.arrayContaining([
        ['from ruby v3', SECRET],
        ['from ruby v4', SECRET],
      ]),
    );
  });
});
