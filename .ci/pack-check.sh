#!/usr/bin/env bash
# Proves the published tarball works: `npm pack`, install it into a scratch
# Nest app, compile that app with tsc, and push a job into a private
# redis-server through the installed package.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
redis_pid=""
cleanup() {
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cd "$root"
npm run build >/dev/null
tarball="$(npm pack --silent --pack-destination "$work" | tail -n 1)"
echo "pack-check: packed $tarball"
contents="$(tar tzf "$work/$tarball")"
for required in dist/index.js dist/index.d.ts dist/server/heartbeat-thread.js $(ls lua/*.lua 2>/dev/null); do
  grep -qx "package/$required" <<<"$contents" || { echo "pack-check: $required missing from the tarball"; exit 1; }
done

app="$work/app"
mkdir -p "$app/src"
dep() { node -p "require('$root/package.json').devDependencies['$1']"; }
cat > "$app/package.json" <<JSON
{
  "name": "wurk-pack-check",
  "private": true,
  "dependencies": {
    "nestjs-wurk": "file:../$tarball",
    "@nestjs/common": "$(dep @nestjs/common)",
    "@nestjs/core": "$(dep @nestjs/core)",
    "ioredis": "$(dep ioredis)",
    "reflect-metadata": "$(dep reflect-metadata)",
    "rxjs": "$(dep rxjs)",
    "typescript": "$(dep typescript)",
    "@types/node": "$(dep @types/node)"
  }
}
JSON
cat > "$app/tsconfig.json" <<'JSON'
{
  "compilerOptions": {
    "target": "ES2022", "module": "commonjs", "strict": true, "outDir": "dist",
    "experimentalDecorators": true, "emitDecoratorMetadata": true, "esModuleInterop": true, "skipLibCheck": false
  },
  "include": ["src"]
}
JSON
cat > "$app/src/main.ts" <<'TS'
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import Redis from 'ioredis';
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
  console.log(`pack-check: ${jid} pushed, run and tracked through the installed package (heartbeat thread from dist)`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
TS

cd "$app"
npm install --no-audit --no-fund --prefer-offline >/dev/null
npx tsc -p tsconfig.json

port="$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >/dev/null &
redis_pid=$!
for _ in $(seq 1 100); do
  node -e "require('net').connect($port,'127.0.0.1').on('connect',()=>process.exit(0)).on('error',()=>process.exit(1))" && break
  sleep 0.1
done
REDIS_URL="redis://127.0.0.1:$port" node dist/main.js
