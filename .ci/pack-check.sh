#!/usr/bin/env bash
# Proves the published tarball works on both ends of the supported range:
# clone the repository afresh (committed HEAD, no dist/, no node_modules),
# `npm ci` and `npm pack` there (prepack builds dist/), install the tarball
# into freshly made apps (Nest 12 + ioredis 6 as CommonJS and as an ES
# module app, which is what `nest new` makes on 12; Nest 11 + ioredis 5 as
# CommonJS) with plain `npm install` (no --legacy-peer-deps, no overrides),
# compile each with tsc, push, run and track a job through the installed
# package on a private redis-server, and run a Jest 30 suite in the Nest 12
# CommonJS app through `preset: 'nestjs-wurk'` (WurkTestingModule with the
# HTTP API mounted, no Babel, no ts-jest).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
redis_pid=""
started=$SECONDS
cleanup() {
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# A clean clone: what a release is built from, never the working tree's dist/.
git clone --quiet --no-local "$root" "$work/clone"
cd "$work/clone"
[ ! -e dist ] || { echo "pack-check: the clone has a dist/ (committed build output?)"; exit 1; }
npm ci --no-audit --no-fund --prefer-offline >/dev/null
echo "pack-check: cloned and installed in $((SECONDS - started)) s"
tarball="$(npm pack --silent --pack-destination "$work" | tail -n 1)"
echo "pack-check: packed $tarball from a fresh clone in $((SECONDS - started)) s"
contents="$(tar tzf "$work/$tarball")"
for required in dist/index.js dist/index.d.ts dist/entries/testing.js dist/entries/testing.d.ts dist/entries/health.js dist/entries/metrics.js dist/entries/tracing.js dist/entries/worker.js dist/entries/wurk-worker.js dist/entries/admin.js dist/entries/internals.js dist/server/heartbeat/heartbeat-thread.js jest/preset.js jest/transform.js dashboard/dist/index.html $(ls lua/*.lua 2>/dev/null); do
  grep -qx "package/$required" <<<"$contents" || { echo "pack-check: $required missing from the tarball"; exit 1; }
done
cd "$root"

port="$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >/dev/null &
redis_pid=$!
for _ in $(seq 1 100); do
  node -e "require('net').connect($port,'127.0.0.1').on('connect',()=>process.exit(0)).on('error',()=>process.exit(1))" && break
  sleep 0.1
done

dep() { node -p "require('$root/package.json').devDependencies['$1']"; }

# make_app NAME NEST IOREDIS MODULE: a fresh app in $work/NAME, MODULE is cjs or esm.
make_app() {
  local name="$1" nest="$2" ioredis="$3" module="$4" app="$work/$1"
  mkdir -p "$app/src"
  local type='"commonjs"' tsmodule='"module": "commonjs"'
  if [ "$module" = esm ]; then type='"module"'; tsmodule='"module": "nodenext", "moduleResolution": "nodenext"'; fi
  cat > "$app/package.json" <<JSON
{
  "name": "wurk-pack-check-$name",
  "private": true,
  "type": $type,
  "dependencies": {
    "nestjs-wurk": "file:../$tarball",
    "@nestjs/common": "$nest",
    "@nestjs/core": "$nest",
    "ioredis": "$ioredis",
    "reflect-metadata": "$(dep reflect-metadata)",
    "rxjs": "$(dep rxjs)",
    "typescript": "$(dep typescript)",
    "@types/node": "$(dep @types/node)"
  }
}
JSON
  cat > "$app/tsconfig.json" <<JSON
{
  "compilerOptions": {
    "target": "ES2022", $tsmodule, "strict": true, "outDir": "dist",
    "experimentalDecorators": true, "emitDecoratorMetadata": true, "esModuleInterop": true, "skipLibCheck": false
  },
  "include": ["src"]
}
JSON
  cat > "$app/src/main.ts" <<'TS'
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { ClientService, StatusService, Worker, WurkModule } from 'nestjs-wurk';

let performed: (value: string) => void;
const ran = new Promise<string>((resolve) => (performed = resolve));

@Worker({ queue: 'packed', track: true })
class PackedWorker {
  perform(message: string, count: number): string {
    performed(`${message} ${count}`);
    return 'done';
  }
}

@Module({
  imports: [WurkModule.forRoot({ redis: { url: process.env.REDIS_URL }, queues: ['packed'], heartbeatInterval: 0.2 })],
  providers: [PackedWorker],
})
class AppModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  await app.init();
  const jid = (await app.get(ClientService).performAsync(PackedWorker, 'hello', 1)) as string;
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the job did not run within 20 s')), 20000));
  if ((await Promise.race([ran, timeout])) !== 'hello 1') throw new Error('perform got the wrong arguments');
  const redis = new Redis(process.env.REDIS_URL as string);
  const deadline = Date.now() + 20000;
  let state: string | null = null;
  let beating = 0;
  while (Date.now() < deadline) {
    state = (await app.get(StatusService).get(jid))?.state ?? null;
    beating = await redis.scard('processes');
    if (state === 'complete' && beating === 1) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await app.close();
  const left = await redis.scard('processes');
  redis.disconnect();
  if (state !== 'complete' || beating !== 1 || left !== 0) {
    throw new Error(`status ${state}, ${beating} process(es) beating while up, ${left} left after close`);
  }
  console.log(`pack-check: ${process.env.PACK_CHECK_APP}: ${jid} pushed, run and tracked through the installed package (heartbeat thread from dist)`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
TS
  (cd "$app" && npm install --no-audit --no-fund --prefer-offline >/dev/null && npx tsc -p tsconfig.json)
  (cd "$app" && PACK_CHECK_APP="$name (Nest $nest, ioredis $ioredis, $module)" REDIS_URL="redis://127.0.0.1:$port" node dist/main.js)
  # Subpath entries resolve through `exports`; the optional peers are absent here, and the root entry above loaded without them.
  (cd "$app" && node -e "if (typeof require('nestjs-wurk/testing').WurkTestingModule !== 'function') process.exit(1)")
  (cd "$app" && node -e "if (typeof require('nestjs-wurk/worker').runStandaloneWorker !== 'function') process.exit(1)")
  (cd "$app" && node -e "if (typeof require('nestjs-wurk/admin').WurkAdmin !== 'function' || typeof require('nestjs-wurk/internals').Manager !== 'function') process.exit(1)")
  (cd "$app" && npx --no-install wurk-worker --help >/dev/null)
  for entry in health metrics tracing; do
    (cd "$app" && node -e "try { require('nestjs-wurk/$entry'); process.exit(1) } catch (e) { if (e.name !== 'MissingPeerError') throw e }")
  done
}

# jest_app APP: a Jest 30 suite in the app through `preset: 'nestjs-wurk'` alone (no Babel, no ts-jest), with
# the app's real module tree (the HTTP API and the dashboard mounted) under WurkTestingModule; plain npm install.
jest_app() {
  local app="$work/$1"
  (cd "$app" && npm install --no-audit --no-fund --prefer-offline --save-dev "jest@$(dep jest)" "@nestjs/testing@$(dep @nestjs/testing)" "@nestjs/platform-express@$(dep @nestjs/platform-express)" >/dev/null)
  echo "module.exports = { preset: 'nestjs-wurk', roots: ['<rootDir>/test'] };" > "$app/jest.config.js"
  mkdir -p "$app/test"
  cat > "$app/test/app.spec.ts" <<'TS'
import 'reflect-metadata';
import { INestApplication, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AdminService, ClientService, Worker, WurkApiModule, WurkDashboardModule, WurkModule } from 'nestjs-wurk';
import { TestingNeedsRedisError, WurkTesting, WurkTestingModule } from 'nestjs-wurk/testing';

@Worker({ queue: 'mail' })
class WelcomeMailWorker {
  perform(email: string): string {
    return `welcome ${email}`;
  }
}

const wurk = WurkModule.forRoot({ redis: { url: 'redis://127.0.0.1:1' } });

@Module({ imports: [wurk, WurkApiModule.register(), WurkDashboardModule.register()], providers: [WelcomeMailWorker] })
class AppModule {}

describe('the app under WurkTestingModule', () => {
  let app: INestApplication;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).overrideModule(wurk).useModule(WurkTestingModule.forRoot()).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });
  afterAll(() => app.close());

  it('collects and drains the job', async () => {
    await app.get(ClientService).performAsync(WelcomeMailWorker, 'ada@example.com');
    app.get(WurkTesting).expectEnqueued(WelcomeMailWorker, 'ada@example.com');
    expect((await app.get(WurkTesting).drain()).performed).toHaveLength(1);
  });

  it('says so when a test needs Redis', async () => {
    await expect(app.get(AdminService).stats.fast()).rejects.toBeInstanceOf(TestingNeedsRedisError);
  });
});
TS
  (cd "$app" && npx --no-install jest --ci 2>&1 | tail -n 6) || { echo "pack-check: Jest through preset 'nestjs-wurk' failed in $1"; exit 1; }
  echo "pack-check: $1: Jest $(dep jest) ran the app's suite through preset 'nestjs-wurk'"
}

make_app nest12-cjs "$(dep @nestjs/core)" "$(dep ioredis)" cjs
jest_app nest12-cjs
make_app nest12-esm "$(dep @nestjs/core)" "$(dep ioredis)" esm
make_app nest11-cjs 11.1.6 5.9.2 cjs
echo "pack-check: done in $((SECONDS - started)) s"
