import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClientService, Worker, WurkModule } from '../../src';
import { usePrivateRedis } from '../support/private-redis';

@Worker({ track: true })
class TrackedWorker {
  perform(): void {}
}

describe('WurkModule with ClientService overridden by a mock', () => {
  const redis = usePrivateRedis();

  it('boots and closes: status hooks sit on the push transport, not on the client', async () => {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: redis.url },
          processing: false,
          clientMiddleware: [(_context, next) => next()],
        }),
      ],
      providers: [TrackedWorker],
    })
    class AppModule {}
    const performAsync = jest.fn().mockResolvedValue('mocked-jid');
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(ClientService)
      .useValue({ performAsync })
      .compile();
    const app = moduleRef.createNestApplication();
    await app.init();
    expect(await app.get(ClientService).performAsync(TrackedWorker)).toBe('mocked-jid');
    await app.close();
  });
});
