import { Socket } from 'node:net';
import type Redis from 'ioredis';
import { waitFor } from './wait';

/**
 * Every command a redis-server runs, as MONITOR reports it, read on a raw socket.
 *
 * ioredis's own `monitor()` is not used: when the MONITOR "+OK" and the first
 * monitored line arrive in one TCP read, it parses the line before it has switched
 * the connection into monitor mode and throws "Command queue state error" (seen
 * under load in CI).
 */
export class RedisMonitor {
  readonly commands: string[][] = [];
  private pending = '';
  private acknowledged: (() => void) | null = null;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => this.take(chunk));
  }

  /** Resolves once the server has acknowledged MONITOR: every later command is recorded. */
  static open(port: number): Promise<RedisMonitor> {
    return new Promise((resolve, reject) => {
      const socket = new Socket();
      const monitor = new RedisMonitor(socket);
      // Kept for the socket's life: an error after MONITOR was acknowledged (the server stopped) is no crash.
      socket.on('error', reject);
      socket.connect(port, '127.0.0.1', () => socket.write('MONITOR\r\n'));
      monitor.acknowledged = () => resolve(monitor);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  /**
   * The commands recorded from index `from` on, each as its arguments, read
   * once MONITOR has reported everything sent before this call (MONITOR
   * reports in order: an ECHO on `client` marks the point; left out).
   */
  async since(from: number, client: Redis): Promise<string[][]> {
    const token = `seen-${Math.random()}`;
    await client.echo(token);
    await waitFor(() => this.commands.some((args) => args[1] === token), { what: 'the monitor to catch up' });
    return this.commands.slice(from).filter((args) => args[0].toUpperCase() !== 'ECHO');
  }

  private take(chunk: string): void {
    this.pending += chunk;
    let end: number;
    while ((end = this.pending.indexOf('\r\n')) >= 0) {
      const line = this.pending.slice(0, end);
      this.pending = this.pending.slice(end + 2);
      if (line === '+OK') {
        this.acknowledged?.();
        this.acknowledged = null;
      } else if (line.startsWith('+')) {
        this.commands.push(monitorArgs(line));
      }
    }
  }
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b', '"': '"', '\\': '\\' };

/**
 * The arguments of one MONITOR line: `+<time> [<db> <addr>] "arg" "arg" ...`, each
 * argument quoted the way redis's sdscatrepr quotes it. Bytes come back as UTF-8 text.
 */
export function monitorArgs(line: string): string[] {
  const args: string[] = [];
  let at = line.indexOf('] ') + 2;
  while (at < line.length) {
    if (line[at] !== '"') {
      at++;
      continue;
    }
    const bytes: number[] = [];
    at++;
    while (line[at] !== '"') {
      if (line[at] === '\\') {
        const code = line[at + 1];
        if (code === 'x') {
          bytes.push(parseInt(line.slice(at + 2, at + 4), 16));
          at += 4;
        } else {
          bytes.push(ESCAPES[code].charCodeAt(0));
          at += 2;
        }
      } else {
        bytes.push(line.charCodeAt(at));
        at++;
      }
    }
    at++;
    args.push(Buffer.from(bytes).toString('utf8'));
  }
  return args;
}
