import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Redis from 'ioredis';
import type { CommandConnection } from './command-connection';

/** `lua/` sits beside `src/` and `dist/`, so one relative path serves both. */
const LUA_DIR = join(__dirname, '..', '..', 'lua');

interface Script {
  source: string;
  sha: string;
}

const cache = new Map<string, Script>();

function load(name: string): Script {
  let script = cache.get(name);
  if (!script) {
    const source = withIncludes(readFileSync(join(LUA_DIR, `${name}.lua`), 'utf8'));
    script = { source, sha: createHash('sha1').update(source).digest('hex') };
    cache.set(name, script);
  }
  return script;
}

/**
 * Redis runs one self-contained source per script, so helpers shared by
 * several scripts live in `lua/include/<name>.lua` and a line
 * `-- #include <name>` is replaced by that file; an include may include
 * another (batch_rules needs index_trim), and each goes in once per script
 * (a second copy would define its locals twice).
 */
function withIncludes(source: string, included = new Set<string>()): string {
  return source.replace(/^-- #include ([a-z_]+)$/gm, (_, include: string) => {
    if (included.has(include)) return '';
    included.add(include);
    return withIncludes(readFileSync(join(LUA_DIR, 'include', `${include}.lua`), 'utf8'), included);
  });
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/**
 * Runs `lua/<name>.lua` with EVALSHA, loading it on NOSCRIPT.
 *
 * Always a direct call, never inside a pipeline: a NOSCRIPT inside a pipeline
 * surfaces only after the pipeline's other commands ran, and replaying the
 * pipeline would apply them twice (a second LPUSH is a second job). Retrying
 * here is safe because NOSCRIPT means the script did not run at all.
 */
export async function runScript<T = unknown>(
  redis: Redis,
  name: string,
  keys: readonly string[],
  args: readonly (string | number | Buffer)[],
): Promise<T> {
  return evalLoading(
    name,
    (sha) => redis.evalsha(sha, keys.length, ...keys, ...args),
    (source) => redis.script('LOAD', source),
  ) as Promise<T>;
}

/** runScript on the heartbeat's connection (`command-connection.ts`). */
export async function runScriptOn<T = unknown>(
  connection: CommandConnection,
  name: string,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<T> {
  const evalsha = (sha: string) => connection.call(['EVALSHA', sha, keys.length, ...keys, ...args]);
  return evalLoading(name, evalsha, (source) => connection.call(['SCRIPT', 'LOAD', source])) as Promise<T>;
}

/** runScript with bulk replies as Buffers, for payloads whose bytes must not pass through a UTF-8 decode. */
export async function runScriptForBytes<T = unknown>(
  redis: Redis,
  name: string,
  keys: readonly string[],
  args: readonly (string | number | Buffer)[],
): Promise<T> {
  return evalLoading(
    name,
    (sha) => redis.callBuffer('evalsha', sha, keys.length, ...keys, ...args),
    (source) => redis.script('LOAD', source),
  ) as Promise<T>;
}

async function evalLoading(
  name: string,
  evalsha: (sha: string) => Promise<unknown>,
  loadScript: (source: string) => Promise<unknown>,
): Promise<unknown> {
  const script = load(name);
  try {
    return await evalsha(script.sha);
  } catch (error) {
    if (!isNoScript(error)) throw error;
    await loadScript(script.source);
    return await evalsha(script.sha);
  }
}

/** The SHA of a script, for tests and diagnostics. */
export function scriptSha(name: string): string {
  return load(name).sha;
}
