// A free loopback TCP port: bound to port 0, read, released. Another process can take it in
// between (rarely); callers that start servers on it (tests, the local NATS cluster) fail loudly then.
import net from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}
