// A scripted WebSocket peer for loadgen's --transport ws tests (native_generator.test.ts): it
// answers the upgrade (or refuses it), unmasks each client frame, and per post first pings, then,
// once the pong with the ping's payload came back, answers with the id `answerId` gives it.
// Loopback only; each test closes it.
import { createHash } from 'node:crypto';
import net from 'node:net';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export interface FakeWsPeer {
  port: number;
  /** Client frames seen: opcode, whether masked, unmasked payload text. */
  frames: { op: number; masked: boolean; text: string }[];
  close(): Promise<void>;
}

/** An unmasked server frame (payload < 64 KiB). */
function frame(op: number, payload: Buffer): Buffer {
  if (payload.length < 126) return Buffer.concat([Buffer.from([0x80 | op, payload.length]), payload]);
  const head = Buffer.from([0x80 | op, 126, 0, 0]);
  head.writeUInt16BE(payload.length, 2);
  return Buffer.concat([head, payload]);
}

/**
 * `refuse`: answer the upgrade with this HTTP status instead of 101. `answerId(id)`: the id the
 * response carries for the post `id` (the id itself for a well-behaved server).
 */
export async function fakeWsPeer(opts: { refuse?: number; answerId?: (id: string) => string }): Promise<FakeWsPeer> {
  const frames: FakeWsPeer['frames'] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    let upgraded = false;
    let pending_id: string | null = null;
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const key = /sec-websocket-key: *(\S+)/i.exec(buf.toString('latin1', 0, end))?.[1] ?? '';
        buf = buf.subarray(end + 4);
        if (opts.refuse !== undefined) {
          sock.end(`HTTP/1.1 ${opts.refuse} Refused\r\nContent-Length: 0\r\n\r\n`);
          return;
        }
        const accept = createHash('sha1').update(key + GUID).digest('base64');
        sock.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
        upgraded = true;
      }
      // Client frames (short: < 64 KiB), bounded by the bytes in hand.
      while (buf.length >= 2) {
        let len = buf[1] & 0x7f;
        let at = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          at = 4;
        }
        const masked = (buf[1] & 0x80) !== 0;
        const need = at + (masked ? 4 : 0) + len;
        if (buf.length < need) return;
        const key = masked ? buf.subarray(at, at + 4) : Buffer.alloc(4);
        const body = Buffer.from(buf.subarray(need - len, need).map((b, i) => b ^ key[i & 3]));
        const op = buf[0] & 0x0f;
        buf = buf.subarray(need);
        frames.push({ op, masked, text: body.toString('utf8') });
        if (op === 0x1) {
          pending_id = (JSON.parse(body.toString('utf8')) as { id: string }).id;
          sock.write(frame(0x9, Buffer.from(`ping-${pending_id}`)));
        } else if (op === 0xa && pending_id !== null && body.toString('utf8') === `ping-${pending_id}`) {
          const id = (opts.answerId ?? ((x: string) => x))(pending_id);
          pending_id = null;
          sock.write(frame(0x1, Buffer.from(`{"type":"response","id":"${id}","status":200,"body":{"order_id":1,"status":"open","fills":[]}}`)));
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    frames,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}
