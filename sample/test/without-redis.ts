import { Test, TestingModuleBuilder } from '@nestjs/testing';
import { WurkTestingModule, WurkTestingOptions } from '../../src/entries/testing';
import { AppModule, sampleWurk } from '../app.module';

/**
 * The sample app with wurk swapped for the testing module: no Redis anywhere. The HTTP API, health and metrics
 * modules stay mounted (what they read from Redis throws TestingNeedsRedisError). Keep chaining overrides on it.
 */
export function sampleWithoutRedis(options: WurkTestingOptions): TestingModuleBuilder {
  return Test.createTestingModule({ imports: [AppModule] })
    .overrideModule(sampleWurk)
    .useModule(WurkTestingModule.forRoot(options));
}
