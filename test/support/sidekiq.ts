import { ChildProcess, execFile, spawn } from 'node:child_process';
import { join } from 'node:path';

/** Ruby files the interop tests load into real Sidekiq processes. */
export const RUBY_DIR = join(__dirname, '..', 'interop', 'ruby');

export interface SidekiqProcess {
  readonly process: ChildProcess;
  /** Everything Sidekiq logged so far (stdout and stderr), for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Runs the real `sidekiq` binary (Debian ruby-sidekiq 6.4) against a private
 * redis-server, loading `requireFile` for its worker classes.
 */
export function startSidekiq(options: { url: string; requireFile: string; queues?: string[]; concurrency?: number; env?: Record<string, string> }): SidekiqProcess {
  const args = ['-r', options.requireFile, '-c', String(options.concurrency ?? 5)];
  for (const queue of options.queues ?? ['default']) args.push('-q', queue);
  const child = spawn('sidekiq', args, {
    env: { ...process.env, REDIS_URL: options.url, RUBYOPT: '-W0', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (chunk) => (log += chunk));
  child.stderr?.on('data', (chunk) => (log += chunk));
  return {
    process: child,
    output: () => log,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** Runs a Ruby script with Sidekiq loaded and REDIS_URL set; resolves to its stdout parsed as JSON. */
export function runRuby<T = unknown>(script: string, url: string, env: Record<string, string> = {}): Promise<T> {
  const prelude = "require 'sidekiq'; require 'sidekiq/api'; require 'json';";
  return new Promise((resolve, reject) => {
    execFile(
      'ruby',
      ['-W0', '-e', prelude + script],
      { env: { ...process.env, REDIS_URL: url, ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 60000 },
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
