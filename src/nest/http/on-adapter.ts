import type { HttpAdapterHost } from '@nestjs/core';

/** The few adapter members wurk uses, so the package needs neither platform's types. */
export interface AdapterLike {
  getType?(): string;
  use(handler: unknown): unknown;
  getInstance(): unknown;
}

/**
 * Runs `then` with the HTTP adapter once Nest hands it over: for
 * NestFactory.create before any provider is built, for
 * Test.createTestingModule at createNestApplication; either way before the
 * app's init registers its body parsers and routes. Nest 11.0 has no
 * `init$`; there NestFactory.create sets the adapter before providers are built.
 */
export function onAdapter(adapterHost: HttpAdapterHost, then: (adapter: AdapterLike) => void): void {
  const run = () => {
    const adapter = adapterHost.httpAdapter as AdapterLike | undefined;
    if (adapter) then(adapter);
  };
  const init$ = (adapterHost as { init$?: { subscribe(next: () => void): unknown } }).init$;
  if (init$) init$.subscribe(run);
  else run();
}
