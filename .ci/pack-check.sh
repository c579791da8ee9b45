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
for required in dist/index.js dist/index.d.ts $(ls lua/*.lua 2>/dev/null); do
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

@Worker({ queue: 'packed' })
class PackedWorker {
  perform(message: string, count: number): void {
    console.log(message, count);
  }
}

@Module({ imports: [WurkModule.forRoot({ redis: { url: process.env.REDIS_URL }, processing: false })], providers: [PackedWorker] })
class AppModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  const jid = await app.get(ClientService).performAsync(PackedWorker, 'hello', 1);
  const status = await app.get(StatusService).get(jid as string);
  await app.close();
  const redis = new Redis(process.env.REDIS_URL as string);
  const queued = await redis.lrange('queue:packed', 0, -1);
  redis.disconnect();
  const job = JSON.parse(queued[0] ?? '{}');
  if (job.jid !== jid || job.class !== 'PackedWorker' || status !== null) {
    throw new Error(`unexpected queue content: ${queued.join('\n')}`);
  }
  console.log(`pack-check: pushed ${jid} through the installed package`);
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
