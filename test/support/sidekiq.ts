import { ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { TimestampMode } from '../../src/job/time';
import { waitFor } from './wait';

/** Ruby files the interop tests load into real Sidekiq processes. */
export const RUBY_DIR = join(__dirname, '..', 'interop', 'ruby');

const REPO_ROOT = join(__dirname, '..', '..');

/** How long one script may run before the test hears of it. */
const SCRIPT_TIMEOUT_MS = 60000;

/** One Sidekiq release the interop suite proves wurk against. */
export interface SidekiqVersion {
  /** As `Sidekiq::VERSION` reports it; each test checks the process it started says so. */
  readonly version: string;
  readonly major: 6 | 7 | 8;
  /** How its client writes `created_at`/`enqueued_at`: float seconds up to 7.x, integer milliseconds from 8.0. */
  readonly timestamps: TimestampMode;
  /** Its Web UI runs on this machine; 8.x needs rack 3.2 and Ruby 3.2, Debian has 2.2 and 3.1. */
  readonly webUi: boolean;
  /** The `sidekiq` server command. */
  server(): string[];
  /** `ruby` with this Sidekiq on its load path. */
  ruby(): string[];
}

/**
 * The stock source trees of tools/sidekiq-src sit beside the repository
 * (`../shared/tools/sidekiq-src` in CI); a worktree nests deeper, so every
 * ancestor is tried. WURK_SIDEKIQ_SRC overrides. Missing is an error, never
 * a skip: a version that cannot start fails its tests.
 */
export function sidekiqSourceDir(): string {
  if (process.env.WURK_SIDEKIQ_SRC) return process.env.WURK_SIDEKIQ_SRC;
  const tried: string[] = [];
  for (let dir = dirname(REPO_ROOT); ; dir = dirname(dir)) {
    const candidate = join(dir, 'shared', 'tools', 'sidekiq-src');
    tried.push(candidate);
    if (existsSync(join(candidate, 'bin', 'sidekiq7'))) return candidate;
    if (dirname(dir) === dir) break;
  }
  throw new Error(
    `Sidekiq 7/8 sources not found (tried ${tried.join(', ')}); set WURK_SIDEKIQ_SRC to tools/sidekiq-src`,
  );
}

function fromSource(bin: string): () => string[] {
  return () => [join(sidekiqSourceDir(), 'bin', bin)];
}

export const SIDEKIQ_6: SidekiqVersion = {
  version: '6.4.1',
  major: 6,
  timestamps: 'seconds',
  webUi: true,
  server: () => ['sidekiq'],
  ruby: () => ['ruby'],
};
export const SIDEKIQ_7: SidekiqVersion = {
  version: '7.3.10',
  major: 7,
  timestamps: 'seconds',
  webUi: true,
  server: fromSource('sidekiq7'),
  ruby: fromSource('ruby-sidekiq7'),
};
export const SIDEKIQ_8: SidekiqVersion = {
  version: '8.1.7',
  major: 8,
  timestamps: 'millis',
  webUi: false,
  server: fromSource('sidekiq8'),
  ruby: fromSource('ruby-sidekiq8'),
};

/**
 * Every major in use: Debian's 6.4.1 and stock 7.3.10 and 8.1.7. Use with `describe.each(SIDEKIQ_VERSIONS)('... Sidekiq
 * $version', ...)`.
 */
export const SIDEKIQ_VERSIONS: readonly SidekiqVersion[] = [SIDEKIQ_6, SIDEKIQ_7, SIDEKIQ_8];

export interface SidekiqProcess {
  readonly process: ChildProcess;
  /** Everything Sidekiq logged so far (stdout and stderr), for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Runs a real Sidekiq server of `version` against a private redis-server, loading `requireFile` for its worker classes.
 */
export function startSidekiq(options: {
  /** Debian's 6.4.1 unless named. */
  version?: SidekiqVersion;
  url: string;
  requireFile: string;
  queues?: string[];
  concurrency?: number;
  env?: Record<string, string>;
}): SidekiqProcess {
  const version = options.version ?? SIDEKIQ_6;
  const [command, ...prefix] = version.server();
  const args = [...prefix, '-r', options.requireFile, '-c', String(options.concurrency ?? 5)];
  for (const queue of options.queues ?? ['default']) args.push('-q', queue);
  const child = spawn(command, args, {
    env: { ...process.env, REDIS_URL: options.url, RUBYOPT: '-W0', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.on('error', (error) => (log += `could not start Sidekiq ${version.version}: ${error.message}\n`));
  child.stdout?.on('data', (chunk) => (log += chunk));
  child.stderr?.on('data', (chunk) => (log += chunk));
  return {
    process: child,
    output: () => log,
    stop: () => stopChild(child),
  };
}

/**
 * Runs a Sidekiq server (startSidekiq's options) until `done` holds, then stops it. A wait that times out says `what`
 * it waited for and everything Sidekiq logged until then.
 */
export async function runSidekiqUntil(
  options: Parameters<typeof startSidekiq>[0],
  done: () => Promise<boolean>,
  what: string,
  timeout = 45000,
): Promise<void> {
  const sidekiq = startSidekiq(options);
  try {
    await waitFor(done, { timeout, what: `Sidekiq ${(options.version ?? SIDEKIQ_6).version} to ${what}` });
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${sidekiq.output()}`);
  } finally {
    await sidekiq.stop();
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * One-shot: runs a Ruby script with Sidekiq (6.4.1 unless named) loaded and REDIS_URL set; resolves to its stdout
 * parsed as JSON.
 */
export function runRuby<T = unknown>(
  script: string,
  url: string,
  env: Record<string, string> = {},
  version: SidekiqVersion = SIDEKIQ_6,
): Promise<T> {
  const prelude = "require 'sidekiq'; require 'sidekiq/api'; require 'json'; Sidekiq.logger.level = Logger::WARN;";
  const [command, ...prefix] = version.ruby();
  return new Promise((resolve, reject) => {
    execFile(
      command,
      [...prefix, '-W0', '-e', prelude + script],
      { env: { ...process.env, REDIS_URL: url, ...env }, maxBuffer: 64 * 1024 * 1024, timeout: SCRIPT_TIMEOUT_MS },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`ruby failed: ${error.message}\n${stderr}`));
        try {
          resolve(JSON.parse(stdout) as T);
        } catch {
          reject(new Error(`ruby printed no JSON:\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

interface Reply {
  ok: boolean;
  out?: string;
  error?: string;
}

/**
 * A long-lived Ruby of one Sidekiq version (test/interop/ruby/session.rb):
 * scripts run one at a time, each answering with what it printed, parsed
 * as JSON. Sidekiq's connection pool stays open between scripts.
 */
export class RubySession {
  private readonly child: ChildProcess;
  private readonly waiting: Array<{ resolve: (reply: Reply) => void; reject: (error: Error) => void }> = [];
  private stderr = '';
  private exited: Error | undefined;

  constructor(
    readonly version: SidekiqVersion,
    url: string,
  ) {
    const [command, ...prefix] = version.ruby();
    this.child = spawn(command, [...prefix, '-W0', join(RUBY_DIR, 'session.rb')], {
      env: { ...process.env, REDIS_URL: url },
      stdio: ['pipe', 'ignore', 'pipe', 'pipe'],
    });
    this.child.stderr?.on('data', (chunk) => (this.stderr += chunk));
    const replies = createInterface({ input: this.child.stdio[3] as Readable });
    replies.on('line', (line) => this.waiting.shift()?.resolve(JSON.parse(line) as Reply));
    const fail = (error: Error) => {
      this.exited = error;
      for (const waiter of this.waiting.splice(0)) waiter.reject(error);
    };
    this.child.on('error', (error) =>
      fail(new Error(`could not start Ruby for Sidekiq ${version.version}: ${error.message}`)),
    );
    this.child.on('exit', (code, signal) =>
      fail(new Error(`Ruby for Sidekiq ${version.version} exited (${code ?? signal}):\n${this.stderr}`)),
    );
  }

  /** Runs `script` and resolves to what it printed, parsed as JSON. */
  async run<T = unknown>(script: string): Promise<T> {
    if (this.exited) throw this.exited;
    const reply = await new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`Ruby script timed out after ${SCRIPT_TIMEOUT_MS} ms:\n${script}`)),
        SCRIPT_TIMEOUT_MS,
      );
      this.waiting.push({
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      (this.child.stdin as Writable).write(JSON.stringify({ script }) + '\n');
    });
    if (!reply.ok) throw new Error(`Ruby (Sidekiq ${this.version.version}) failed: ${reply.error}\nscript:\n${script}`);
    try {
      return JSON.parse(reply.out ?? '') as T;
    } catch {
      throw new Error(`Ruby printed no JSON:\n${reply.out}`);
    }
  }

  stop(): Promise<void> {
    this.child.stdin?.end();
    return stopChild(this.child);
  }
}

/**
 * A RubySession of `version` for the enclosing describe block, started on
 * first use (the redis-server's URL is known once it booted) and stopped
 * after the block. Its first script checks the version it loaded.
 */
export function useSidekiqRuby(
  version: SidekiqVersion,
  server: { url: string },
): { run<T = unknown>(script: string): Promise<T> } {
  let session: RubySession | undefined;
  let ready: Promise<RubySession> | undefined;
  afterAll(async () => {
    await session?.stop();
    session = undefined;
    ready = undefined;
  });
  async function start(): Promise<RubySession> {
    session = new RubySession(version, server.url);
    const loaded = await session.run<string>('puts JSON.generate(Sidekiq::VERSION)');
    if (loaded !== version.version) throw new Error(`expected Sidekiq ${version.version}, Ruby loaded ${loaded}`);
    return session;
  }
  return {
    async run<T>(script: string): Promise<T> {
      ready ??= start();
      return (await ready).run<T>(script);
    },
  };
}
