// A small WebSocket test client over `ws`: every received message is parsed and kept in order, and
// tests wait for the next message matching a predicate (with a timeout), or for the close.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import WebSocket from 'ws';
import { loadNativeSecp256k1 } from '../../src/auth/secp256k1_native.js';
import { bytesToHex, personalHash, utf8ToBytes, type Api, type StartedServer, type Wallet } from '../server/harness.js';
import { serverPerFile, type ServerOptions } from '../server/per_file.js';

export type Msg = Record<string, any>;

export class WsClient {
  readonly ws: WebSocket;
  /** Every message received, in order. */
  readonly all: Msg[] = [];
  /** Messages not yet taken by `next`. */
  private queue: Msg[] = [];
  private waiters: { pred: (m: Msg) => boolean; resolve: (m: Msg) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }[] = [];
  closed: { code: number; reason: string; at_ms: number } | null = null;
  private close_waiters: ((c: { code: number; reason: string; at_ms: number }) => void)[] = [];
  readonly opened_ms = Date.now();

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as Msg;
      this.all.push(m);
      const i = this.waiters.findIndex((w) => w.pred(m));
      if (i >= 0) {
        const [w] = this.waiters.splice(i, 1);
        clearTimeout(w.timer);
        w.resolve(m);
      } else {
        this.queue.push(m);
      }
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason), at_ms: Date.now() };
      for (const w of this.close_waiters) w(this.closed);
      this.close_waiters = [];
      for (const w of this.waiters) {
        clearTimeout(w.timer);
        w.reject(new Error(`connection closed (${code} ${String(reason)}) while waiting for a message`));
      }
      this.waiters = [];
    });
    ws.on('error', () => {
      // surfaced through close
    });
  }

  static connect(url: string): Promise<WsClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url.replace(/^http/, 'ws') + '/ws');
      const c = new WsClient(ws);
      ws.once('open', () => resolve(c));
      ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode })));
      ws.once('error', reject);
    });
  }

  send(o: unknown): void {
    this.ws.send(typeof o === 'string' ? o : JSON.stringify(o));
  }

  /** The next message (in arrival order) that satisfies `pred`; earlier non-matching ones stay queued. */
  next(pred: (m: Msg) => boolean = () => true, timeout_ms = 5000): Promise<Msg> {
    const i = this.queue.findIndex(pred);
    if (i >= 0) return Promise.resolve(this.queue.splice(i, 1)[0]);
    if (this.closed) return Promise.reject(new Error(`connection closed (${this.closed.code}) before a matching message`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.timer !== timer);
        reject(new Error(`no matching message within ${timeout_ms} ms; queued: ${JSON.stringify(this.queue).slice(0, 2000)}`));
      }, timeout_ms);
      this.waiters.push({ pred, resolve, reject, timer });
    });
  }

  nextType(type: string, timeout_ms = 5000): Promise<Msg> {
    return this.next((m) => m.type === type, timeout_ms);
  }

  /** Sends `o` and waits for the reply of `type` (or an error). */
  async request(o: Record<string, unknown>, type: string): Promise<Msg> {
    this.send(o);
    return this.next((m) => m.type === type || m.type === 'error');
  }

  /** Queued messages of a type (not yet taken), removed from the queue. */
  take(type: string): Msg[] {
    const out = this.queue.filter((m) => m.type === type);
    this.queue = this.queue.filter((m) => m.type !== type);
    return out;
  }

  /** Waits until the server closes the connection. */
  waitClose(timeout_ms = 10_000): Promise<{ code: number; reason: string; at_ms: number }> {
    if (this.closed) return Promise.resolve(this.closed);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not closed within ${timeout_ms} ms`)), timeout_ms);
      this.close_waiters.push((c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
  }

  /** request_challenge, sign `Ringbook Exchange\nNonce: <nonce>`, auth; returns auth_success. */
  async authenticate(w: Wallet): Promise<Msg> {
    const ch = await this.request({ type: 'request_challenge', address: w.address }, 'challenge');
    if (ch.type !== 'challenge') throw new Error(`challenge refused: ${JSON.stringify(ch)}`);
    const ok = await this.request({ type: 'auth', address: w.address, signature: w.sign(`Ringbook Exchange\nNonce: ${ch.nonce}`) }, 'auth_success');
    if (ok.type !== 'auth_success') throw new Error(`auth refused: ${JSON.stringify(ok)}`);
    return ok;
  }

  close(): void {
    if (!this.closed) this.ws.close();
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const DIGITS = /^(0|[1-9]\d*)$/;

/** The `secp256k1` npm package's libsecp256k1 addon (the server's fallback verifier), or null. */
const NATIVE_SECP256K1 = loadNativeSecp256k1();
/** Wallets whose first native signature was checked against noble's (see fastSigner). */
const native_checked = new WeakSet<Wallet>();

/** EIP-191 personal_sign of `hash` with noble ('recovered' format: the recovery bit without a trial recovery). */
function nobleSignature(w: Wallet, hash: Uint8Array): string {
  const sig = secp256k1.sign(hash, w.priv, { prehash: false, lowS: true, format: 'recovered' });
  return '0x' + bytesToHex(sig.subarray(1, 65)) + (27 + sig[0]).toString(16);
}

/**
 * EIP-191 personal_sign in one call, for tests that sign thousands of requests: with the
 * libsecp256k1 addon when it loads (~20x faster than noble in JS, which was half of
 * book_delta's CPU: 10 s of its 10,000 requests), else noble. Both sign RFC 6979 with low S, so
 * the bytes are the same: each wallet's first native signature is checked against noble's.
 */
export function fastSigner(w: Wallet): (message: string) => string {
  return (message: string) => {
    const hash = personalHash(utf8ToBytes(message));
    if (NATIVE_SECP256K1 === null) return nobleSignature(w, hash);
    const { signature, recid } = NATIVE_SECP256K1.ecdsaSign(hash, w.priv);
    const sig = '0x' + bytesToHex(signature) + (27 + recid).toString(16);
    if (!native_checked.has(w)) {
      const noble = nobleSignature(w, hash);
      if (sig !== noble) throw new Error(`fastSigner: libsecp256k1 signed ${sig}, noble ${noble}`);
      native_checked.add(w);
    }
    return sig;
  };
}

/** The WebSocket clients a test file opens on its one server. */
export interface WsClients {
  /** A new client on the file's server, closed with the others. */
  connect(): Promise<WsClient>;
  /** Closes every client opened so far. */
  closeAll(): void;
}

/** One real server per test file (serverPerFile); the clients opened through it are closed before it stops. */
export function wsServerPerFile(onStarted: (s: StartedServer, a: Api) => void, options?: ServerOptions): WsClients {
  let url = '';
  const clients: WsClient[] = [];
  const closeAll = (): void => {
    for (const c of clients) c.close();
    clients.length = 0;
  };
  serverPerFile((s, a) => {
    url = s.url;
    onStarted(s, a);
  }, options, closeAll);
  return {
    async connect(): Promise<WsClient> {
      const c = await WsClient.connect(url);
      clients.push(c);
      return c;
    },
    closeAll,
  };
}
