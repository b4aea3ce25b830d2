// Order-entry benchmark: the three ways a market maker sends orders, in the same run against the
// same server (a child process): single HTTP `POST /orders`, `POST /orders/batch` of 20 orders,
// and WebSocket `post` of single orders. For each phase: requests/s and orders/s, latency p50 and
// p99 (client side, send to answer), and the server's front-thread CPU per order (from
// /proc/<pid>/task/<pid>/stat: the main thread runs HTTP, WebSocket and the answers; signature
// checks run in the verify pool, matching in the matcher thread).
//
// Run: npx tsc -p tsconfig.json && node dist/bench/order_entry.js [--orders N] [--lanes N]
//   --orders N   orders per phase (default 6000; the batch phase sends N / 20 batches)
//   --lanes N    concurrent connections, one request in flight each (default 32)
// Orders are pre-signed (native secp256k1) before the timed phases; they are post-only bids far
// below the market so nothing matches (the engine's work per order is the same in every phase).
// Ends with ONE JSON line {"bench":"order_entry",...}. Results: docs/benchmarks.md "order entry".
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { eip191Hash } from '../src/auth/eip191.js';
import { orderJsonMessage } from '../src/auth/messages.js';
import { loadNativeSecp256k1, walletKey, type WalletKey } from './load/flow.js';
import { sampleProc, startServer, type ServerChild } from './load/server_child.js';
import { quantileFloorRankOfSorted } from './quantile.js';

const BATCH_ITEMS = 20;
const MARKET = 'ETH-USDC';
const TICK = 10_000;
const LOT = 100;
/** 1000.00 USDC and below: far under any ask, so post-only bids rest. */
const PRICE_TOP_TICKS = 100_000;

interface Args {
  orders: number;
  lanes: number;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { orders: 6000, lanes: 32 };
  for (let i = 0; i < argv.length; i++) {
    const v = Number(argv[i + 1]);
    if (argv[i] === '--orders') a.orders = v;
    else if (argv[i] === '--lanes') a.lanes = v;
    else continue;
    i++;
  }
  if (!(Number.isSafeInteger(a.orders) && a.orders >= BATCH_ITEMS && a.orders <= 200_000)) throw new Error('--orders must be in [20, 200000]');
  if (!(Number.isSafeInteger(a.lanes) && a.lanes >= 1 && a.lanes <= 512)) throw new Error('--lanes must be in [1, 512]');
  return a;
}

type Body = Record<string, unknown>;

/** Signs `count` post-only bids for `w`, nonces from `next_nonce` on. */
function signOrders(secp: ReturnType<typeof loadNativeSecp256k1>, w: WalletKey, count: number, next_nonce: () => number, price_seed: number): Body[] {
  const out: Body[] = [];
  for (let i = 0; i < count; i++) {
    const nonce = next_nonce();
    const price = (PRICE_TOP_TICKS - ((price_seed + i) % 5000)) * TICK;
    const f = { market_id: MARKET, side: 'bid', price, quantity: LOT, order_type: 'limit', time_in_force: 'post_only', nonce };
    const s = secp.ecdsaSign(eip191Hash(orderJsonMessage(f)), w.priv);
    const signature = '0x' + Buffer.from(s.signature).toString('hex') + (27 + s.recid).toString(16);
    out.push({ user: w.address, ...f, signature });
  }
  return out;
}

interface PhaseResult {
  requests: number;
  orders: number;
  wall_ms: number;
  requests_per_s: number;
  orders_per_s: number;
  latency_ms_p50: number;
  latency_ms_p99: number;
  front_cpu_ms: number;
  front_cpu_us_per_order: number;
  server_cpu_us_per_order: number;
  failed: number;
}

/**
 * Runs `lanes` closed loops over `work` (lane k takes items k, k + lanes, ...: a wallet belongs to
 * one lane, so its nonces arrive in order) and measures the server around them.
 */
async function phase(server: ServerChild, lanes: number, work: Body[][], orders_per_request: number,
  send: (lane: number, item: Body[]) => Promise<boolean>): Promise<PhaseResult> {
  const latencies: number[] = [];
  let failed = 0;
  const before = sampleProc(server.pid, true);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: lanes }, async (_, lane) => {
    for (let i = lane; i < work.length; i += lanes) {
      const s = performance.now();
      if (!(await send(lane, work[i]))) failed++;
      latencies.push(performance.now() - s);
    }
  }));
  const wall_ms = performance.now() - t0;
  const after = sampleProc(server.pid, true);
  const front = (after?.threads.get(server.pid)?.cpu_ms ?? 0) - (before?.threads.get(server.pid)?.cpu_ms ?? 0);
  const total = (after?.cpu_ms ?? 0) - (before?.cpu_ms ?? 0);
  latencies.sort((a, b) => a - b);
  const orders = work.length * orders_per_request;
  return {
    requests: work.length, orders, wall_ms: Math.round(wall_ms),
    requests_per_s: Math.round((work.length * 1000) / wall_ms), orders_per_s: Math.round((orders * 1000) / wall_ms),
    latency_ms_p50: Number(quantileFloorRankOfSorted(latencies, 0.5).toFixed(2)), latency_ms_p99: Number(quantileFloorRankOfSorted(latencies, 0.99).toFixed(2)),
    front_cpu_ms: Math.round(front), front_cpu_us_per_order: Number(((front * 1000) / orders).toFixed(1)),
    server_cpu_us_per_order: Number(((total * 1000) / orders).toFixed(1)), failed,
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const here = path.dirname(fileURLToPath(import.meta.url));
  const main_js = path.resolve(here, '../src/main.js');
  const admin_token = 'bench-order-entry-admin-token';
  const high = 1_000_000_000;
  const server = await startServer({
    main_js, admin_token,
    config: { rate_limits: { orders_per_wallet: high, cancels_per_wallet: high, deposits_per_wallet: high, withdrawals_per_wallet: high, gets_per_ip: high } },
  });
  const base = `http://127.0.0.1:${server.port}`;
  try {
    const secp = loadNativeSecp256k1();
    // Two wallets per lane: each lane alternates them, so no wallet has two requests in flight.
    const wallets = Array.from({ length: args.lanes * 2 }, (_, i) => walletKey(secp, 'ringbook-order-entry', i));
    for (const w of wallets) {
      const r = await fetch(`${base}/deposit`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-admin-token': admin_token },
        body: JSON.stringify({ user: w.address, asset: 'USDC', amount: '100000000' }),
      });
      if (r.status !== 200) throw new Error(`deposit failed: ${r.status} ${await r.text()}`);
    }
    const nonces = wallets.map(() => 0);
    const walletOf = (i: number): number => (i % args.lanes) + args.lanes * (Math.floor(i / args.lanes) % 2);
    /** `n` requests of `per` orders each; request i belongs to lane i % lanes and a wallet of that lane. */
    const build = (n: number, per: number, seed: number): Body[][] => Array.from({ length: n }, (_, i) => {
      const k = walletOf(i);
      return signOrders(secp, wallets[k], per, () => ++nonces[k], seed + i * per);
    });
    const n_single = args.orders;
    const n_batch = Math.floor(args.orders / BATCH_ITEMS);
    const t_sign = performance.now();
    // In sending order: nonces grow per wallet in the order requests are sent.
    const warm = build(args.lanes * 8, 1, 3000);
    const warm_batches = build(args.lanes, BATCH_ITEMS, 4000);
    const single = build(n_single, 1, 0);
    const batches = build(n_batch, BATCH_ITEMS, 1000);
    const posts = build(n_single, 1, 2000);
    const sign_ms = performance.now() - t_sign;

    const post = async (p: string, body: unknown): Promise<{ status: number; text: string }> => {
      const r = await fetch(`${base}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: r.status, text: await r.text() };
    };
    // Warm-up (untimed): the server's JIT sees both routes before the first timed phase.
    await phase(server, args.lanes, warm, 1, async (_lane, [o]) => (await post('/orders', o)).status === 200);
    await phase(server, args.lanes, warm_batches, BATCH_ITEMS, async (_lane, items) => (await post('/orders/batch', { requests: items.map((o) => ({ kind: 'order', ...o })) })).status === 200);
    const single_r = await phase(server, args.lanes, single, 1, async (_lane, [o]) => (await post('/orders', o)).status === 200);
    const batch_r = await phase(server, args.lanes, batches, BATCH_ITEMS, async (_lane, items) => {
      const r = await post('/orders/batch', { requests: items.map((o) => ({ kind: 'order', ...o })) });
      return r.status === 200 && !r.text.includes('"ok":false');
    });
    const sockets = await Promise.all(Array.from({ length: args.lanes }, () => new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws`);
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
    })));
    const waiting = new Map<string, (status: number) => void>();
    for (const ws of sockets) {
      ws.on('message', (data) => {
        const m = JSON.parse(String(data)) as { type: string; id?: string; status?: number };
        if (m.type === 'response' && m.id !== undefined) waiting.get(m.id)?.(m.status ?? 0);
      });
    }
    let next_id = 0;
    const ws_r = await phase(server, args.lanes, posts, 1, (lane, [o]) => new Promise<boolean>((resolve) => {
      const id = `b${++next_id}`;
      waiting.set(id, (status) => {
        waiting.delete(id);
        resolve(status === 200);
      });
      sockets[lane].send(JSON.stringify({ type: 'post', id, path: '/orders', body: o }));
    }));
    for (const ws of sockets) ws.close();

    const ratio = batch_r.front_cpu_us_per_order > 0 ? single_r.front_cpu_us_per_order / batch_r.front_cpu_us_per_order : null;
    const line = {
      bench: 'order_entry',
      date: new Date().toISOString(),
      machine: `${os.cpus().length} cpu ${os.cpus()[0]?.model ?? '?'}`,
      lanes: args.lanes,
      sign_ms: Math.round(sign_ms),
      http_single: single_r,
      http_batch20: batch_r,
      ws_post: ws_r,
      front_cpu_single_over_batch20_per_order: ratio === null ? null : Number(ratio.toFixed(2)),
    };
    const f = (name: string, r: PhaseResult): string =>
      `${name.padEnd(14)} ${String(r.requests_per_s).padStart(6)} req/s ${String(r.orders_per_s).padStart(6)} orders/s  ` +
      `p50 ${r.latency_ms_p50} ms p99 ${r.latency_ms_p99} ms  front CPU ${r.front_cpu_us_per_order} us/order  failed ${r.failed}`;
    console.log(f('http single', single_r));
    console.log(f('http batch 20', batch_r));
    console.log(f('ws post', ws_r));
    console.log(`front-thread CPU per order: single / batch of 20 = ${line.front_cpu_single_over_batch20_per_order}`);
    console.log(JSON.stringify(line));
  } finally {
    await server.stop();
  }
}

main().catch((e: unknown) => {
  console.error('order_entry bench failed:', e);
  process.exit(1);
});
