import * as net from 'node:net';

/**
 * Records every outgoing socket the test file opens, so a sample test can
 * prove it ran without Redis: not merely without a redis-server running,
 * but without a single connection attempt to anything.
 */
export function recordConnections(): unknown[] {
  const attempts: unknown[] = [];
  const realConnect = net.Socket.prototype.connect;
  beforeAll(() => {
    net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
      attempts.push(args[0]);
      return (realConnect as (...a: unknown[]) => net.Socket).apply(this, args);
    } as typeof realConnect;
  });
  afterAll(() => {
    net.Socket.prototype.connect = realConnect;
  });
  return attempts;
}
