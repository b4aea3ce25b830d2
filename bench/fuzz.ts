// The project's own hostile-input fuzzer (issue 20): seeded mutations of valid signed bodies of
// every route and of every WebSocket message (bench/fuzz_cases.ts), sent to a real server over
// raw TCP and WebSocket. It checks after every request that no answer is 5xx and that a request
// the server must answer was answered, every few hundred that the server is alive, and at the
// end that the victims' accounts (whose addresses the attacks use, never their keys) are
// unchanged and the server stops cleanly.
//
//   node dist/bench/fuzz.js                 # short run (the one `make test` runs in test/server/fuzz.test.ts)
//   node dist/bench/fuzz.js --long          # 200,000 HTTP requests and 20,000 WebSocket frames
//   node dist/bench/fuzz.js --seed 7 --http 5000 --ws 1000
// Ends with one JSON line {"bench":"fuzz",...}; exit code 1 when anything failed.
import WebSocket from 'ws';
import { Rng } from '../src/util/prng.js';
import { numberArg, runIfMain, shortOrLong } from './cli_args.js';
import { adminHeaders, api, startServer, Wallet, type StartedServer } from '../test/server/harness.js';
import { parseResponses, rawExchange } from '../test/server/raw_http.js';
import { nextHttpCase, nextWsFrame, type FuzzWorld, type HttpCase } from './fuzz_cases.js';

export interface FuzzOptions {
  seed: number;
  http_requests: number;
  ws_frames: number;
  /** HTTP requests in flight at once (each on its own connection). */
  concurrency: number;
}

export interface FuzzReport {
  seed: number;
  http_sent: number;
  ws_sent: number;
  /** Answers by status (and `none` for requests closed unanswered). */
  statuses: Record<string, number>;
  /** Requests of each kind (valid, object, text, oversized, get, method:unrouted, ws:...). */
  kinds: Record<string, number>;
  ws_closes: Record<string, number>;
  alive_checks: number;
  failures: string[];
  duration_s: number;
}

export const SHORT: FuzzOptions = { seed: 20261125, http_requests: 3000, ws_frames: 1000, concurrency: 8 };
export const LONG: FuzzOptions = { seed: 20261125, http_requests: 200_000, ws_frames: 20_000, concurrency: 8 };

const ANSWER_WAIT_MS = 10_000;
const ALIVE_EVERY_REQUESTS = 500;
const WS_FRAMES_PER_PING = 25;
const WS_CONNECTIONS = 4;
/** Failures kept in the report (the count goes on). */
const FAILURES_KEPT = 50;

function bump(m: Record<string, number>, k: string): void {
  m[k] = (m[k] ?? 0) + 1;
}

/** Attackers with money to trade with, victims with balances, one open order and a referral. */
export async function prepareWorld(s: StartedServer): Promise<FuzzWorld> {
  const a = api(s.url);
  const attackers = Array.from({ length: 4 }, () => Wallet.random());
  const victims = Array.from({ length: 3 }, () => Wallet.random());
  for (const w of [...attackers, ...victims]) {
    for (const [asset, amount] of [['USDC', '1000000'], ['ETH', '1000'], ['BTC', '10']]) {
      const r = await a.post('/deposit', { user: w.address, asset, amount }, adminHeaders(s));
      if (r.status !== 200) throw new Error(`fuzz: deposit failed: ${r.status} ${r.text}`);
    }
  }
  // A victim's resting order far below any attacker price (attackers bid and ask from 10,000 up).
  for (const v of victims) {
    const r = await a.post('/orders', v.order({ market_id: 'BTC-USDC', side: 'bid', price: 100_000, quantity: 10 }));
    if (r.status !== 200) throw new Error(`fuzz: victim order failed: ${r.status} ${r.text}`);
  }
  return { attackers, victims: victims.map((v) => v.address), admin_token: s.admin_token, markets: ['ETH-USDC', 'BTC-USDC'] };
}

/** Everything the API shows of the victims' accounts. */
export async function victimState(s: StartedServer, victims: string[]): Promise<string> {
  const a = api(s.url);
  const out: unknown[] = [];
  for (const v of victims) {
    for (const p of [`/account/${v}/balances`, `/account/${v}/orders?status=all`, `/account/${v}/fills`, `/referral/${v}`]) {
      const r = await a.get(p);
      out.push([p, r.status, r.body]);
    }
  }
  return JSON.stringify(out);
}

function describeCase(c: HttpCase): string {
  const body = c.body === null ? '' : ` ${c.body.subarray(0, 160).toString('utf8')}`;
  return `${c.method} ${c.path.slice(0, 120)} [${c.kind}]${body}`;
}

async function sendHttp(s: StartedServer, c: HttpCase, report: FuzzReport): Promise<void> {
  let head = `${c.method} ${c.path} HTTP/1.1\r\n`;
  for (const [k, v] of Object.entries(c.headers)) head += `${k}: ${v}\r\n`;
  head += '\r\n';
  const is_head = c.method === 'HEAD';
  const done = (t: string): boolean => {
    try {
      return parseResponses(t, is_head ? new Set([0]) : new Set()).length >= 1;
    } catch {
      return false;
    }
  };
  const r = await rawExchange(s.port, c.body === null ? [head] : [head, c.body], ANSWER_WAIT_MS, done);
  if (process.env.FUZZ_SLOW_MS !== undefined && r.ms > Number(process.env.FUZZ_SLOW_MS)) console.error(`slow ${r.ms} ms: ${describeCase(c)} -> ${JSON.stringify(r.text.slice(0, 100))}`);
  report.http_sent++;
  bump(report.kinds, c.kind.split(':')[0] + (c.kind.startsWith('method') ? ':unrouted' : ''));
  if (r.text.length === 0) {
    bump(report.statuses, 'none');
    if (c.expect_answer) fail(report, `no answer (${r.closed ? 'closed' : 'timeout'} after ${r.ms} ms): ${describeCase(c)}`);
    return;
  }
  let status: number;
  let body: string;
  try {
    const [res] = parseResponses(r.text, is_head ? new Set([0]) : new Set());
    status = res.status;
    body = res.body;
  } catch (e) {
    fail(report, `unparseable answer ${JSON.stringify(r.text.slice(0, 120))}: ${describeCase(c)}`);
    return;
  }
  bump(report.statuses, String(status));
  if (status >= 500) fail(report, `${status} ${body.slice(0, 200)}: ${describeCase(c)}`);
  if (!is_head) {
    try {
      const j = JSON.parse(body) as { ok?: unknown };
      if (typeof j.ok !== 'boolean') fail(report, `answer without an envelope: ${body.slice(0, 120)}: ${describeCase(c)}`);
    } catch {
      fail(report, `answer is not JSON: ${body.slice(0, 120)}: ${describeCase(c)}`);
    }
  }
}

function fail(report: FuzzReport, message: string): void {
  if (report.failures.length < FAILURES_KEPT) report.failures.push(message);
  else if (report.failures.length === FAILURES_KEPT) report.failures.push('... more failures not kept');
}

async function checkAlive(s: StartedServer, report: FuzzReport): Promise<void> {
  report.alive_checks++;
  if (s.proc.exitCode !== null || s.proc.signalCode !== null) {
    fail(report, `server exited (code ${s.proc.exitCode}, signal ${s.proc.signalCode})`);
    throw new Error('fuzz: the server died');
  }
  const r = await api(s.url).get('/health');
  if (r.status !== 200) fail(report, `/health answered ${r.status}`);
}

async function fuzzHttp(s: StartedServer, world: FuzzWorld, opts: FuzzOptions, report: FuzzReport): Promise<void> {
  const r = new Rng(opts.seed);
  let next = 0;
  while (next < opts.http_requests) {
    const round = Math.min(ALIVE_EVERY_REQUESTS, opts.http_requests - next);
    const cases = Array.from({ length: round }, () => nextHttpCase(r, world));
    next += round;
    let i = 0;
    await Promise.all(Array.from({ length: opts.concurrency }, async () => {
      while (i < cases.length) await sendHttp(s, cases[i++], report);
    }));
    await checkAlive(s, report);
  }
}

interface WsConn {
  ws: WebSocket;
  frames: string[];
  closed: number | null;
}

function openWs(url: string): Promise<WsConn> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws') + '/ws');
    const c: WsConn = { ws, frames: [], closed: null };
    ws.on('message', (d) => c.frames.push(String(d)));
    ws.on('close', (code) => {
      c.closed = code;
    });
    ws.once('open', () => resolve(c));
    ws.once('error', reject);
  });
}

/** Waits for the pong of `request_id` (true) or the close (false), at most ANSWER_WAIT_MS. */
async function pinged(c: WsConn, request_id: string): Promise<boolean> {
  c.ws.send(JSON.stringify({ type: 'ping', request_id }));
  const until = Date.now() + ANSWER_WAIT_MS;
  while (Date.now() < until) {
    if (c.frames.some((f) => f.includes(`"request_id":"${request_id}"`) && f.includes('"pong"'))) return true;
    if (c.closed !== null) return false;
    await new Promise((res) => setTimeout(res, 5));
  }
  return false;
}

function checkFrames(c: WsConn, report: FuzzReport): void {
  for (const f of c.frames) {
    let m: { type?: string; code?: string; status?: number };
    try {
      m = JSON.parse(f) as typeof m;
    } catch {
      fail(report, `ws frame is not JSON: ${f.slice(0, 120)}`);
      continue;
    }
    if (m.type === 'error' && m.code === 'INTERNAL_ERROR') fail(report, `ws INTERNAL_ERROR: ${f.slice(0, 200)}`);
    if (m.type === 'response' && typeof m.status === 'number' && m.status >= 500) fail(report, `ws post answered ${m.status}: ${f.slice(0, 200)}`);
  }
  c.frames = [];
}

async function fuzzWs(s: StartedServer, world: FuzzWorld, opts: FuzzOptions, report: FuzzReport): Promise<void> {
  const r = new Rng(opts.seed ^ 0x5f5f);
  const conns: WsConn[] = [];
  for (let i = 0; i < WS_CONNECTIONS; i++) conns.push(await openWs(s.url));
  let sent = 0;
  let pings = 0;
  while (sent < opts.ws_frames) {
    const k = r.int(0, conns.length - 1);
    let c = conns[k];
    for (let j = 0; j < WS_FRAMES_PER_PING && sent < opts.ws_frames; j++, sent++) {
      const f = nextWsFrame(r, world);
      bump(report.kinds, f.kind);
      if (c.closed === null && c.ws.readyState === WebSocket.OPEN) c.ws.send(f.data);
    }
    report.ws_sent = sent;
    const answered = c.closed === null && await pinged(c, `fz${pings++}`);
    checkFrames(c, report);
    if (!answered) {
      // Closed by a rule (oversized frame 1009, AUTH_TIMEOUT, ...): recorded; a fresh connection.
      bump(report.ws_closes, String(c.closed ?? 'no-pong'));
      if (c.closed === null) {
        fail(report, 'ws: no pong within the wait on an open connection');
        c.ws.terminate();
      }
      c = await openWs(s.url);
      conns[k] = c;
    }
    if (pings % 20 === 0) await checkAlive(s, report);
  }
  for (const c of conns) c.ws.terminate();
  await checkAlive(s, report);
}

/** The whole fuzz run against a started server (the victims are checked before and after). */
export async function runFuzz(s: StartedServer, opts: FuzzOptions): Promise<FuzzReport> {
  const t0 = Date.now();
  const report: FuzzReport = {
    seed: opts.seed, http_sent: 0, ws_sent: 0, statuses: {}, kinds: {}, ws_closes: {}, alive_checks: 0, failures: [], duration_s: 0,
  };
  const world = await prepareWorld(s);
  const before = await victimState(s, world.victims);
  await fuzzHttp(s, world, opts, report);
  await fuzzWs(s, world, opts, report);
  const after = await victimState(s, world.victims);
  if (after !== before) fail(report, `a victim's account changed:\nbefore ${before.slice(0, 600)}\nafter  ${after.slice(0, 600)}`);
  report.duration_s = Math.round((Date.now() - t0) / 100) / 10;
  return report;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const opts = shortOrLong<FuzzOptions>(args, SHORT, LONG);
  opts.seed = numberArg(args, '--seed') ?? opts.seed;
  opts.http_requests = numberArg(args, '--http') ?? opts.http_requests;
  opts.ws_frames = numberArg(args, '--ws') ?? opts.ws_frames;
  const s = await startServer();
  let report: FuzzReport;
  try {
    report = await runFuzz(s, opts);
  } finally {
    const stopped = await s.stop();
    if (stopped.code !== 0) console.error(`fuzz: the server did not stop cleanly (code ${stopped.code}, signal ${stopped.signal})`);
  }
  for (const f of report.failures) console.error(`FAIL ${f}`);
  console.log(JSON.stringify({
    bench: 'fuzz', seed: report.seed, http_requests: report.http_sent, ws_frames: report.ws_sent,
    failures: report.failures.length, statuses: report.statuses, kinds: report.kinds, ws_closes: report.ws_closes,
    alive_checks: report.alive_checks, duration_s: report.duration_s,
  }));
  process.exit(report.failures.length === 0 ? 0 : 1);
}

runIfMain(import.meta.url, main);
