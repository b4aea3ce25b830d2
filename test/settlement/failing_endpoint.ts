// A DA role's (or any client's) RPC endpoint that a test takes down in the ways a real one fails:
// a loopback HTTP server that proxies to the dev chain while `up` (or, with no upstream, answers
// every call `0x5`, enough for eth_blockNumber), and otherwise resets the connection, answers a
// canned status and body (a load balancer's 503 page, a provider's 429 or 500 JSON-RPC error), or
// streams a body without end (a broken or hostile endpoint), or never answers ('silent': not even
// headers; 'stall': headers and a first byte, then nothing). Used by settlement_poster_yield.test.ts
// (the lease handed over on a real cluster), poster_hand_over.test.ts (the rpc_failing rule on the
// test clock) and rpc_answers.test.ts (what JsonRpc, `ringbook verify`'s DA fetch and
// withdraw-onchain's signature fetch make of each answer; those two ask with GET or a non-RPC body).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RPC_ANSWER_BYTES_MAX } from '../../src/settlement/rpc.js';

/** An answer given as is: its status, body and, when it lies, the Content-Length it claims. */
export interface CannedAnswer {
  status: number;
  body: string;
  content_length?: number;
}

export type EndpointMode = 'up' | 'reset' | 'endless' | 'silent' | 'stall' | CannedAnswer;

/** A proxy's error page when its node is down. */
export const HTTP_503_PAGE: CannedAnswer = { status: 503, body: '<html>503 Service Unavailable</html>' };
/** Where an endless body stops if the client never does (4 answers' worth: the test's loop is bounded). */
export const ENDLESS_BYTES_MAX = 4 * RPC_ANSWER_BYTES_MAX;
const ENDLESS_CHUNK = Buffer.alloc(64 * 1024, 0x20);

export class FailingEndpoint {
  mode: EndpointMode = 'up';
  /** JSON-RPC methods asked while not up (a role out for rpc_failing probes with eth_blockNumber). */
  readonly asked_down: string[] = [];
  /** Called with each call's method before it is answered (a test's clock moves here). */
  on_call: (method: string) => void = () => {};
  /** Bytes of the last endless body written, and whether the client cut it (closed the connection). */
  endless = { bytes: 0, cut: false };

  private constructor(private readonly server: http.Server, readonly url: string, private readonly upstream: string | null) {}

  static async start(upstream: string | null = null): Promise<FailingEndpoint> {
    let e: FailingEndpoint | null = null;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => void e?.serve(Buffer.concat(chunks), res).catch(() => res.destroy()));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    e = new FailingEndpoint(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, upstream);
    return e;
  }

  private async serve(body: Buffer, res: http.ServerResponse): Promise<void> {
    // A GET (the DA fetch) has no body: its method is the HTTP one.
    const call = (body.length === 0 ? { id: 0, method: 'GET' } : JSON.parse(body.toString('utf8'))) as { id: number; method: string };
    this.on_call(call.method);
    const mode = this.mode;
    if (mode !== 'up') this.asked_down.push(call.method);
    if (mode === 'reset') {
      res.destroy();
    } else if (mode === 'endless') {
      await this.streamEndless(res);
    } else if (mode === 'silent') {
      // Never answers; close() ends the connection.
    } else if (mode === 'stall') {
      res.writeHead(200, { 'content-type': 'application/json' }).write('{');
    } else if (mode !== 'up') {
      const headers = { 'content-type': mode.body.startsWith('<') ? 'text/html' : 'application/json', 'content-length': mode.content_length ?? Buffer.byteLength(mode.body) };
      res.writeHead(mode.status, headers);
      if (mode.content_length === undefined) res.end(mode.body);
      else res.write(mode.body);
    } else if (this.upstream === null) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: '0x5' }));
    } else {
      const r = await fetch(this.upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(r.status, { 'content-type': 'application/json' }).end(Buffer.from(await r.arrayBuffer()));
    }
  }

  /** A 200 whose body never ends: chunks until the client closes the connection (or ENDLESS_BYTES_MAX). */
  private async streamEndless(res: http.ServerResponse): Promise<void> {
    const e = { bytes: 0, cut: false };
    this.endless = e;
    const closed = new Promise<void>((r) => res.on('close', () => {
      e.cut = true;
      r();
    }));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"jsonrpc":"2.0","id":1,"result":"');
    while (e.bytes < ENDLESS_BYTES_MAX && !e.cut) {
      e.bytes += ENDLESS_CHUNK.length;
      if (!res.write(ENDLESS_CHUNK)) await Promise.race([new Promise((r) => res.once('drain', r)), closed]);
    }
    if (!e.cut) res.end('"}');
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}
