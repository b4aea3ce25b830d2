// The load bench's WebSocket transport (bench/load.ts --transport ws): each pre-signed HTTP
// request of a lane becomes the WebSocket order-entry message carrying the SAME signed body
// (DECISIONS, "Order entry over WebSocket"), as a whole client frame, masked per RFC 6455 5.3
// with a fresh random key per frame, so native-bench/loadgen writes it as it writes an HTTP request
// (pre-built bytes, nothing computed on the request path; loadgen_ws.h reads the answers).
//
// The post's id is `<lane>:<k>`: the lane's index in the request file and the request's index in
// that lane's queue of this file, which is how loadgen checks that an answer is the in-flight
// request's (one post in flight per connection, as over HTTP).
import { randomFillSync } from 'node:crypto';

export type Transport = 'http' | 'ws';

/** The signed trading paths order entry over WebSocket takes (src/gateway/order_entry.ts). */
const WS_POST_PATHS = new Set(['/orders', '/orders/cancel', '/orders/amend', '/orders/cancel-all', '/orders/batch', '/orders/cancel-after']);
/** Masking keys drawn from the system's random source per this many frames (one call, not one per frame). */
const KEYS_PER_DRAW = 4096;
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');

/** `path` and body of a pre-built `POST <path> HTTP/1.1` request (bench/load/flow.ts httpRequest). */
export function postOf(request: Buffer): { path: string; body: Buffer } {
  const line_end = request.indexOf('\r\n');
  const line = request.toString('latin1', 0, line_end < 0 ? Math.min(request.length, 80) : line_end);
  const m = /^POST (\S+) HTTP\/1\.1$/.exec(line);
  if (m === null) throw new Error(`--transport ws: not a POST request: ${JSON.stringify(line)}`);
  if (!WS_POST_PATHS.has(m[1])) throw new Error(`--transport ws: POST ${m[1]} has no WebSocket order entry (only ${[...WS_POST_PATHS].join(', ')}; funding stays on HTTP)`);
  const head_end = request.indexOf(HEAD_END);
  if (head_end < 0) throw new Error(`--transport ws: POST ${m[1]} has no end of head`);
  return { path: m[1], body: request.subarray(head_end + HEAD_END.length) };
}

/** One masked client text frame of `payload`, masked with `key` (4 bytes). */
export function maskedTextFrame(payload: Buffer, key: Buffer): Buffer {
  const n = payload.length;
  const head = n < 126 ? 2 : n < 65536 ? 4 : 10;
  const f = Buffer.allocUnsafe(head + 4 + n);
  f[0] = 0x81; // FIN, text
  if (n < 126) f[1] = 0x80 | n;
  else if (n < 65536) {
    f[1] = 0x80 | 126;
    f.writeUInt16BE(n, 2);
  } else {
    f[1] = 0x80 | 127;
    f.writeBigUInt64BE(BigInt(n), 2);
  }
  key.copy(f, head, 0, 4);
  for (let i = 0; i < n; i++) f[head + 4 + i] = payload[i] ^ key[i & 3];
  return f;
}

/** Builds a lane's frames from its HTTP requests; one per request, in order. */
export class WsFrameMaker {
  private keys = Buffer.alloc(0);
  private at = 0;

  private nextKey(): Buffer {
    if (this.at + 4 > this.keys.length) {
      this.keys = randomFillSync(Buffer.allocUnsafe(4 * KEYS_PER_DRAW));
      this.at = 0;
    }
    const k = this.keys.subarray(this.at, this.at + 4);
    this.at += 4;
    return k;
  }

  /** The post frame for request `k` of lane `lane`, from its HTTP request bytes. */
  frame(request: Buffer, lane: number, k: number): Buffer {
    const { path, body } = postOf(request);
    const payload = Buffer.concat([Buffer.from(`{"type":"post","id":"${lane}:${k}","path":"${path}","body":`, 'latin1'), body, Buffer.from('}', 'latin1')]);
    return maskedTextFrame(payload, this.nextKey());
  }
}

/** The WebSocket side of loadgen's report (native_generator.ts NativeReport). */
export interface WsReport {
  transport?: Transport;
  ws_unexpected_frames?: number;
  ws_id_mismatches?: number;
  ws_closes?: number;
  stderr_text?: string;
}

/** A WS run whose frames were not all answers, or a binary without --transport ws, yields no figures. */
export function wsSaneOrThrow(rep: WsReport): void {
  if (rep.transport !== 'ws') throw new Error('loadgen ignored --transport ws (an older binary? run `make native`)');
  const bad = rep.ws_unexpected_frames ?? 0;
  if (bad > 0) {
    throw new Error(`loadgen --transport ws: ${bad} frame(s) were not answers to the in-flight post (${rep.ws_id_mismatches ?? 0} id mismatches, ` +
      `${rep.ws_closes ?? 0} close frames): the WebSocket order entry is broken; loadgen said: ${rep.stderr_text ?? '(nothing)'}`);
  }
}
