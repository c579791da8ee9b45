import { Module } from '@nestjs/common';
import { Test, TestingModuleBuilder } from '@nestjs/testing';
import { WurkTestingModule, WurkTestingOptions } from '../../src/entries/testing';
import { AppModule, sampleApi, sampleWurk } from '../app.module';

/** Stands in for the HTTP API module, which reads Redis (test it with a redis-server, as test/e2e does). */
@Module({})
class NoHttpApi {}

/** The sample app with wurk swapped for the testing module: no Redis anywhere. Keep chaining overrides on it. */
export function sampleWithoutRedis(options: WurkTestingOptions): TestingModuleBuilder {
  return Test.createTestingModule({ imports: [AppModule] })
    .overrideModule(sampleWurk)
    .useModule(WurkTestingModule.forRoot(options))
    .overrideModule(sampleApi)
    .useModule(NoHttpApi);
}
