// Real-server test harness: spawns the compiled server (`node dist/src/main.js`) as a child
// process on a free port with a fresh data dir and a test config, plus a tiny HTTP client and a
// wallet whose signing path is independent of src/auth (noble + keccak directly, own EIP-191 hash,
// own message texts from DECISIONS.md), so a bug in the server's auth code cannot hide itself.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes, randomBytes, utf8ToBytes } from '@noble/hashes/utils.js';

// ---------------------------------------------------------------------------------------------
// Locating the compiled server

/** The repository root: the nearest ancestor of this file holding package.json (works from test/ and dist/test/). */
function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'config'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error('harness: repository root (package.json + config/) not found above ' + fileURLToPath(import.meta.url));
}

export const REPO_ROOT = repoRoot();
export const SERVER_MAIN = path.join(REPO_ROOT, 'dist', 'src', 'main.js');

// ---------------------------------------------------------------------------------------------
// Starting and stopping a server

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';

/** Rate limits high enough that ordinary tests never meet them. */
export const HIGH_RATE_LIMITS = {
  orders_per_wallet: 1_000_000,
  cancels_per_wallet: 1_000_000,
  deposits_per_wallet: 1_000_000,
  withdrawals_per_wallet: 1_000_000,
  gets_per_ip: 1_000_000,
};

/**
 * The per-IP budget of failed signatures (limits.failed_signatures_per_ip_*) out of the way: every
 * test client is 127.0.0.1, and many tests (and bench/fuzz.ts) send bad signatures on purpose.
 * test/server/rate_limit.test.ts sets small ones to test it.
 */
export const HIGH_FAILED_SIGNATURE_LIMITS = {
  failed_signatures_per_ip_per_s: 1_000_000,
  failed_signatures_per_ip_burst: 1_000_000,
};

/**
 * How long a start may take to print its listening line: ~1 s on an idle machine, over 20 s seen
 * for a restart on the 2-core machine at load average 22 (consent.test.ts, other suites beside
 * it). The wait ends on the line or on the process's exit, so a bound this wide costs a failing
 * start nothing.
 */
const LISTEN_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

export interface StopResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface StartedServer {
  url: string;
  port: number;
  admin_token: string;
  data_dir: string;
  proc: ChildProcess;
  /** Output so far (live). */
  output(): { stdout: string; stderr: string };
  /** Sends `signal` (SIGTERM), waits for exit (SIGKILL after a timeout), removes the data dir. */
  stop(signal?: NodeJS.Signals): Promise<StopResult>;
}

export interface StartOptions {
  /** Merged over the harness defaults (high rate limits), which are merged over config/default.json by the server. */
  config?: Record<string, unknown>;
  /** Extra environment variables (override the harness's RINGBOOK_* values). */
  env?: Record<string, string>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) {
    try {
      p.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
});

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    out[k] = isObject(out[k]) && isObject(v) ? deepMerge(out[k] as Record<string, unknown>, v) : v;
  }
  return out;
}

export async function startServer(opts: StartOptions = {}): Promise<StartedServer> {
  if (!fs.existsSync(SERVER_MAIN)) {
    throw new Error(`harness: ${SERVER_MAIN} does not exist: compile first with \`npx tsc -p tsconfig.json\``);
  }
  const data_dir = fs.mkdtempSync(os.tmpdir() + '/ringbook-');
  // Metrics on a free port (the default 9464 is one per machine; tests run servers in parallel).
  const config = deepMerge({ rate_limits: HIGH_RATE_LIMITS, limits: HIGH_FAILED_SIGNATURE_LIMITS, metrics: { port: 0 } }, opts.config ?? {});
  const config_file = path.join(data_dir, 'test-config.json');
  fs.writeFileSync(config_file, JSON.stringify(config, null, 2));
  const admin_token = opts.env?.RINGBOOK_ADMIN_TOKEN ?? TEST_ADMIN_TOKEN;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    RINGBOOK_PORT: '0',
    RINGBOOK_HOST: '127.0.0.1',
    RINGBOOK_DATA_DIR: data_dir,
    RINGBOOK_ADMIN_TOKEN: admin_token,
    RINGBOOK_CONFIG: config_file,
    ...(opts.env ?? {}),
  };
  delete env.RINGBOOK_OPERATOR_KEY;
  if (opts.env?.RINGBOOK_OPERATOR_KEY) env.RINGBOOK_OPERATOR_KEY = opts.env.RINGBOOK_OPERATOR_KEY;
  const proc = spawn(process.execPath, [SERVER_MAIN], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(proc);
  let stdout = '';
  let stderr = '';
  proc.stdout!.setEncoding('utf8');
  proc.stderr!.setEncoding('utf8');
  proc.stdout!.on('data', (d: string) => {
    stdout += d;
  });
  proc.stderr!.on('data', (d: string) => {
    stderr += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('exit', (code, signal) => {
      live.delete(proc);
      resolve({ code, signal });
    });
  });
  let exit_info: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  void exited.then((e) => {
    exit_info = e;
  });

  const cleanup = (): void => {
    fs.rmSync(data_dir, { recursive: true, force: true });
  };

  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      const started = Date.now();
      const timer = setInterval(() => {
        const m = /ringbook: listening on http:\/\/[^:\s]+:(\d+)/.exec(stdout);
        if (m) {
          clearInterval(timer);
          resolve(Number(m[1]));
        } else if (exit_info !== null) {
          clearInterval(timer);
          reject(new Error(`harness: server exited (code ${exit_info.code}, signal ${exit_info.signal}) before listening.\nstderr:\n${stderr}\nstdout:\n${stdout}`));
        } else if (Date.now() - started > LISTEN_TIMEOUT_MS) {
          clearInterval(timer);
          reject(new Error(`harness: no listening line within ${LISTEN_TIMEOUT_MS} ms.\nstderr:\n${stderr}\nstdout:\n${stdout}`));
        }
      }, 20);
    });
  } catch (e) {
    proc.kill('SIGKILL');
    await exited;
    cleanup();
    throw e;
  }

  let stopping: Promise<StopResult> | null = null;
  const stop = (signal: NodeJS.Signals = 'SIGTERM'): Promise<StopResult> => {
    if (stopping) return stopping;
    stopping = (async () => {
      if (exit_info === null) {
        proc.kill(signal);
        const killer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(killer);
      }
      const e = await exited;
      cleanup();
      return { code: e.code, signal: e.signal, stdout, stderr };
    })();
    return stopping;
  };

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    admin_token,
    data_dir,
    proc,
    output: () => ({ stdout, stderr }),
    stop,
  };
}

/** Runs a compiled script of dist/ (`node <script> ...args`) to its exit; its output collected. */
export function runScript(script: string, args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [path.join(REPO_ROOT, 'dist', script), ...args], {
      cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    p.stdout!.on('data', (d: Buffer) => (stdout += d));
    p.stderr!.on('data', (d: Buffer) => (stderr += d));
    p.on('error', reject);
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

// ---------------------------------------------------------------------------------------------
// HTTP client

export interface ApiResponse {
  status: number;
  /** Lowercase header names. */
  headers: Record<string, string>;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: any;
  text: string;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** Send the body with Transfer-Encoding: chunked (no Content-Length). */
  chunked?: boolean;
  agent?: http.Agent | false;
}

/**
 * A kept-alive socket idle for 2 s is closed by this side. uWS closes an idle connection after
 * its 10 s timeout on 4 s ticks (6-16 s seen: protocol.test.ts), a Node http server (a cluster
 * matcher's /status) after its 5 s keepAliveTimeout; a request written on a socket the server is
 * closing at that moment fails with "socket hang up" (ECONNRESET). Loaded runs of the cluster
 * test met it (m1's /status socket sat idle ~5 s while the other roles started), so the client
 * lets go first.
 */
const KEEP_ALIVE_IDLE_MS = 2_000;
const agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: KEEP_ALIVE_IDLE_MS });

/** One HTTP request. `body`: an object (sent as JSON), a string or Buffer (sent as is), or undefined. */
export function request(method: string, url: string, body?: unknown, opts: RequestOptions = {}): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? Buffer.from(body as string | Buffer) : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (payload !== undefined) {
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
      if (!opts.chunked) headers['Content-Length'] = String(payload.length);
    }
    const req = http.request(url, { method, headers, agent: opts.agent ?? agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        if (!res.complete) {
          reject(new Error('response body incomplete'));
          return;
        }
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON: keep the text
        }
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) h[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
        resolve({ status: res.statusCode ?? 0, headers: h, body: parsed, text });
      });
    });
    req.on('error', reject);
    if (payload !== undefined) {
      if (opts.chunked) {
        // Two chunks, to exercise the chunked path.
        const half = Math.floor(payload.length / 2);
        req.write(payload.subarray(0, half));
        req.end(payload.subarray(half));
      } else {
        req.end(payload);
      }
    } else {
      req.end();
    }
  });
}

export interface Api {
  get(p: string, headers?: Record<string, string>): Promise<ApiResponse>;
  post(p: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
  put(p: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
  req(method: string, p: string, body?: unknown, opts?: RequestOptions): Promise<ApiResponse>;
}

export function api(url: string): Api {
  return {
    get: (p, headers) => request('GET', url + p, undefined, { headers }),
    post: (p, body, headers) => request('POST', url + p, body, { headers }),
    put: (p, body, headers) => request('PUT', url + p, body, { headers }),
    req: (method, p, body, opts) => request(method, url + p, body, opts),
  };
}

/** The admin header for a server. */
export function adminHeaders(s: { admin_token: string }): Record<string, string> {
  return { 'X-Admin-Token': s.admin_token };
}

// ---------------------------------------------------------------------------------------------
// Independent signing

const SECP_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

export function keccakHex(bytes: Uint8Array): string {
  return '0x' + bytesToHex(keccak_256(bytes));
}

/** EIP-191 personal_sign hash over raw bytes. */
export function personalHash(data: Uint8Array): Uint8Array {
  const prefix = utf8ToBytes(`\x19Ethereum Signed Message:\n${data.length}`);
  const all = new Uint8Array(prefix.length + data.length);
  all.set(prefix, 0);
  all.set(data, prefix.length);
  return keccak_256(all);
}

function bigintTo32(x: bigint): Uint8Array {
  return hexToBytes(x.toString(16).padStart(64, '0'));
}

function bytesToBigint(b: Uint8Array): bigint {
  return BigInt('0x' + bytesToHex(b));
}

export function addressOfPublicKey(uncompressed65: Uint8Array): string {
  return '0x' + bytesToHex(keccak_256(uncompressed65.subarray(1))).slice(24);
}

/** Recovers the signer address of a 65-byte r||s||v hex signature over a 32-byte hash (any s). */
export function recoverAddress(hash32: Uint8Array, signature_hex: string): string {
  const sig = hexToBytes(signature_hex.replace(/^0x/, ''));
  if (sig.length !== 65) throw new Error('signature must be 65 bytes');
  const v = sig[64];
  const rec = v >= 27 ? v - 27 : v;
  const s = secp256k1.Signature.fromBytes(sig.subarray(0, 64), 'compact').addRecoveryBit(rec);
  return addressOfPublicKey(s.recoverPublicKey(hash32).toBytes(false));
}

export class Wallet {
  readonly priv: Uint8Array;
  readonly pub: Uint8Array;
  readonly address: string;
  private nonce_counter = 0;

  constructor(priv?: Uint8Array) {
    this.priv = priv ?? secp256k1.utils.randomSecretKey();
    this.pub = secp256k1.getPublicKey(this.priv, false);
    this.address = addressOfPublicKey(this.pub);
  }

  static random(): Wallet {
    return new Wallet();
  }

  /** The next nonce (1, 2, 3, ...): strictly increasing per wallet. */
  nextNonce(): number {
    return ++this.nonce_counter;
  }

  /** Raises the local counter so the next nonce is above `n`. */
  skipTo(n: number): void {
    if (n > this.nonce_counter) this.nonce_counter = n;
  }

  /** r || s || v (v = 27 + recovery id) over a 32-byte hash; `high_s` makes the malleable twin. */
  signHashBytes(hash32: Uint8Array, opts: { high_s?: boolean; v_base?: 0 | 27 } = {}): Uint8Array {
    const compact = secp256k1.sign(hash32, this.priv, { prehash: false, lowS: true });
    let rec = -1;
    for (const bit of [0, 1]) {
      const p = secp256k1.Signature.fromBytes(compact, 'compact').addRecoveryBit(bit).recoverPublicKey(hash32).toBytes(false);
      if (bytesToHex(p) === bytesToHex(this.pub)) {
        rec = bit;
        break;
      }
    }
    if (rec < 0) throw new Error('wallet: no recovery id reproduces the public key');
    let r = compact.subarray(0, 32);
    let s = compact.subarray(32, 64);
    if (opts.high_s) {
      s = bigintTo32(SECP_N - bytesToBigint(s));
      rec ^= 1;
      r = r.slice();
    }
    const out = new Uint8Array(65);
    out.set(r, 0);
    out.set(s, 32);
    out[64] = (opts.v_base ?? 27) + rec;
    return out;
  }

  /** EIP-191 personal_sign of a text message, 0x hex. */
  sign(message: string, opts: { high_s?: boolean; v_base?: 0 | 27 } = {}): string {
    return '0x' + bytesToHex(this.signHashBytes(personalHash(utf8ToBytes(message)), opts));
  }

  /** eth_sign style: signs keccak256(message) directly, without the EIP-191 prefix. */
  signRawKeccak(message: string): string {
    return '0x' + bytesToHex(this.signHashBytes(keccak_256(utf8ToBytes(message))));
  }

  // --- signed request bodies (message texts written from DECISIONS.md, not from src/auth) ---

  order(o: OrderInput, opts: SignOptions = {}): Record<string, unknown> {
    const nonce = opts.nonce ?? this.nextNonce();
    const order_type = o.order_type ?? 'limit';
    const time_in_force = o.time_in_force ?? 'gtc';
    const signed_price = o.price ?? 0;
    const message = (opts.form ?? 'json') === 'json'
      ? `{"market_id":${JSON.stringify(o.market_id)},"side":${JSON.stringify(o.side)},"price":${signed_price},"quantity":${o.quantity},"order_type":${JSON.stringify(order_type)},"time_in_force":${JSON.stringify(time_in_force)},"nonce":${nonce}` +
        (o.stp !== undefined ? `,"stp":${JSON.stringify(o.stp)}` : '') +
        (o.expires_after_ms !== undefined ? `,"expires_after_ms":${o.expires_after_ms}` : '') + '}'
      : `ringbook:order:${o.market_id}:${o.side}:${signed_price}:${o.quantity}:${nonce}`;
    const body: Record<string, unknown> = {
      user: opts.user ?? this.address,
      market_id: o.market_id,
      side: o.side,
    };
    if (o.price !== undefined) body.price = o.price;
    body.quantity = o.quantity;
    body.order_type = order_type;
    body.time_in_force = time_in_force;
    body.nonce = nonce;
    if (o.client_order_id !== undefined) body.client_order_id = o.client_order_id;
    if (o.stp !== undefined) body.stp = o.stp;
    if (o.expires_after_ms !== undefined) body.expires_after_ms = o.expires_after_ms;
    body.signature = opts.signer ? opts.signer(message) : this.sign(message);
    return body;
  }

  cancel(c: { order_id?: number | string; client_order_id?: string }, opts: SignOptions = {}): Record<string, unknown> {
    const nonce = opts.nonce ?? this.nextNonce();
    const id = c.order_id === undefined ? '' : String(c.order_id);
    const message = `ringbook:cancel:${id}:${c.client_order_id ?? ''}:${nonce}`;
    const body: Record<string, unknown> = { user: opts.user ?? this.address };
    if (c.order_id !== undefined) body.order_id = typeof c.order_id === 'number' ? String(c.order_id) : c.order_id;
    body.client_order_id = c.client_order_id ?? '';
    body.nonce = nonce;
    body.signature = opts.signer ? opts.signer(message) : this.sign(message);
    return body;
  }

  amend(a: { order_id: number; price: number; quantity: number }, opts: SignOptions = {}): Record<string, unknown> {
    const nonce = opts.nonce ?? this.nextNonce();
    const message = `ringbook:amend:${a.order_id}:${a.price}:${a.quantity}:${nonce}`;
    return {
      user: opts.user ?? this.address, order_id: a.order_id, price: a.price, quantity: a.quantity, nonce,
      signature: opts.signer ? opts.signer(message) : this.sign(message),
    };
  }

  cancelAll(market_id?: string, opts: SignOptions = {}): Record<string, unknown> {
    const nonce = opts.nonce ?? this.nextNonce();
    const message = `ringbook:cancel-all:${market_id ?? '*'}:${nonce}`;
    const body: Record<string, unknown> = { user: opts.user ?? this.address };
    if (market_id !== undefined) body.market_id = market_id;
    body.nonce = nonce;
    body.signature = opts.signer ? opts.signer(message) : this.sign(message);
    return body;
  }

  /** `amount` in the asset's smallest on-chain unit (wei for ETH) as a digit string. */
  withdraw(asset: string, amount: string, opts: SignOptions = {}): Record<string, unknown> {
    const nonce = opts.nonce ?? this.nextNonce();
    const address = opts.user ?? this.address;
    const message = `ringbook:withdraw:${address}:${asset}:${amount}:${nonce}`;
    return { address, asset, amount, nonce, signature: opts.signer ? opts.signer(message) : this.sign(message) };
  }

  /** POST /orders/cancel-after body (the dead-man switch; 0 disarms). */
  cancelAfter(timeout_ms: number, opts: SignOptions = {}): Record<string, unknown> {
    const nonce = opts.nonce ?? this.nextNonce();
    const message = `ringbook:cancel-after:${timeout_ms}:${nonce}`;
    return { user: opts.user ?? this.address, timeout_ms, nonce, signature: opts.signer ? opts.signer(message) : this.sign(message) };
  }

  /** POST /agents body: this wallet (the user) approves `agent` until `valid_until_ms`. */
  approveAgent(agent: string, name: string, valid_until_ms: number, opts: SignOptions = {}): Record<string, unknown> {
    const nonce = opts.nonce ?? this.nextNonce();
    const message = `ringbook:approve-agent:${agent}:${name}:${valid_until_ms}:${nonce}`;
    return { user: opts.user ?? this.address, agent, name, valid_until_ms, nonce, signature: opts.signer ? opts.signer(message) : this.sign(message) };
  }

  /** POST /agents/revoke body. */
  revokeAgent(agent: string, opts: SignOptions = {}): Record<string, unknown> {
    const nonce = opts.nonce ?? this.nextNonce();
    const message = `ringbook:revoke-agent:${agent}:${nonce}`;
    return { user: opts.user ?? this.address, agent, nonce, signature: opts.signer ? opts.signer(message) : this.sign(message) };
  }

  /** POST /referral/register body: this wallet is the referred user. */
  referral(referrer: string, opts: SignOptions = {}): Record<string, unknown> {
    const nonce = opts.nonce ?? this.nextNonce();
    const referred = opts.user ?? this.address;
    const message = `ringbook:referral:${referred}:${referrer}:${nonce}`;
    return { referred, referrer, nonce, signature: opts.signer ? opts.signer(message) : this.sign(message) };
  }

  /**
   * POST /force-include body around `payload` (a signed body, or raw bytes/text to send as is).
   * The envelope nonce is `opts.nonce` or the next one; sign the payload with a higher nonce.
   */
  forceInclude(payload: Record<string, unknown> | string, opts: SignOptions = {}): Record<string, unknown> {
    const nonce = opts.nonce ?? this.nextNonce();
    const user = opts.user ?? this.address;
    const bytes = utf8ToBytes(typeof payload === 'string' ? payload : JSON.stringify(payload));
    const payload_hex = '0x' + bytesToHex(bytes);
    const message = `ringbook:force-include:${user}:0x${bytesToHex(keccak_256(bytes))}:${nonce}`;
    return { user, payload: payload_hex, nonce, signature: opts.signer ? opts.signer(message) : this.sign(message) };
  }
}

export interface OrderInput {
  market_id: string;
  side: 'bid' | 'ask' | string;
  price?: number;
  quantity: number;
  order_type?: 'limit' | 'market' | string;
  time_in_force?: 'gtc' | 'ioc' | 'fok' | 'post_only' | string;
  client_order_id?: string;
  stp?: 'expire_maker' | 'expire_taker' | 'expire_both' | string;
  expires_after_ms?: number;
}

export interface SignOptions {
  nonce?: number;
  /** Colon form or compact JSON form (orders only). */
  form?: 'json' | 'colon';
  /** The `user`/`address` written in the body (default: the wallet's address). */
  user?: string;
  /** Signs the message text instead of the wallet (e.g. another wallet, a broken signer). */
  signer?: (message: string) => string;
}

export { randomBytes, bytesToHex, hexToBytes, utf8ToBytes, keccak_256 };

// ---------------------------------------------------------------------------------------------
// Small helpers for tests

/** Units: real value x 1,000,000. */
export const U = 1_000_000;

export async function deposit(s: StartedServer, user: string, asset: string, amount: string): Promise<ApiResponse> {
  return api(s.url).post('/deposit', { user, asset, amount }, adminHeaders(s));
}

export interface BalanceView {
  [asset: string]: any;
}

export async function balances(s: StartedServer, address: string): Promise<BalanceView> {
  const r = await api(s.url).get(`/account/${address}/balances`);
  if (r.status !== 200) throw new Error(`balances ${address}: ${r.status} ${r.text}`);
  return r.body.data;
}

export async function adminState(s: StartedServer): Promise<any> {
  const r = await api(s.url).get('/admin/state', adminHeaders(s));
  if (r.status !== 200) throw new Error(`admin state: ${r.status} ${r.text}`);
  return r.body.data;
}

/** Admin state once the DA thread has published the latest committed batch's root: the root
 *  trails the commit (it is computed off the answer path), so a test that compares roots before
 *  and after waits for it to settle first. Bounded: 200 polls of 25 ms. */
export async function settledAdminState(s: StartedServer): Promise<any> {
  for (let i = 0; i < 200; i += 1) {
    const st = await adminState(s);
    if (st.state_root !== null) return st;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('admin state: no published state root after 5 s');
}

/**
 * How long the DA thread's root may trail the last committed batch in a test: it runs at a lower
 * priority (threads.background: nice 10, SCHED_BATCH), so on the 2-core machine busy with other
 * suites it gets a small share of a core; a 5 s bound failed there. Idle, it is a few ms.
 */
export const ROOTS_CAUGHT_UP_MS = 30_000;

/** Admin state once the DA thread has published the root of the last committed batch (bounded). */
export async function caughtUpState(s: StartedServer, ms = ROOTS_CAUGHT_UP_MS): Promise<any> {
  const deadline = Date.now() + ms;
  for (;;) {
    const st = await adminState(s);
    if (st.state_root !== null && st.state_root_batch_id === st.batch_id) return st;
    if (Date.now() > deadline) throw new Error(`the DA thread's root did not catch up in ${ms} ms: ${JSON.stringify(st)}\n${s.output().stderr.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** ceil(a / b) for non-negative bigints. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

/** `ringbook verify` (dist/src/cli/verify.js) against `url` with `config_file`; its exit code and output. */
export function runVerifier(url: string, config_file: string, extra: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [path.join(REPO_ROOT, 'dist', 'src', 'cli', 'verify.js'), '--url', url, '--config', config_file, ...extra], {
      cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    p.stdout!.on('data', (d) => (stdout += d));
    p.stderr!.on('data', (d) => (stderr += d));
    p.on('error', reject);
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
