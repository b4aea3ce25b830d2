// Floods and the long soak (issue 20), against a real server started here:
//   node dist/bench/flood.js --ws 10000          # 10,000 concurrent WebSocket connections
//   node dist/bench/flood.js --wallets 100000    # 100,000 fresh wallets, one signed request each
//   node dist/bench/flood.js --soak 60           # 60 minutes of steady flow, sampled every minute
// Without a number each mode runs its short version (2,000 connections, 2,000 wallets, 2 minutes).
// Each mode checks what the issue asks (answers correct, memory bounded, latency back to normal
// after the flood; for the soak, no growth past the retention plateau) and ends with one JSON line
// {"bench":"flood_ws"|"flood_wallets"|"soak_hour",...}; exit code 1 when a check failed.
import { loadavg } from 'node:os';
import WebSocket from 'ws';
import { Rng } from '../src/util/prng.js';
import { runIfMain } from './cli_args.js';
import { quantileFloorRankOfSorted } from './quantile.js';
import { adminHeaders, adminState, api, startServer, Wallet, type StartedServer } from '../test/server/harness.js';
import { fastSigner } from '../test/ws/client.js';

/** Requests (or connection opens) in flight at once. */
const CONCURRENCY = 64;
/** /health requests per latency probe. */
const PROBE_REQUESTS = 200;
/** After the flood, /health p50 must be back within this factor of the p50 before it (plus 2 ms of noise). */
const RECOVERY_P50_FACTOR_MAX = 2;

/** The floor-rank `q` quantile of `xs` (unsorted); 0 for a minute without requests. */
function quantile(xs: number[], q: number): number {
  return xs.length === 0 ? 0 : quantileFloorRankOfSorted(Float64Array.from(xs).sort(), q);
}

async function probe(s: StartedServer): Promise<{ p50_ms: number; p99_ms: number }> {
  const a = api(s.url);
  const ms: number[] = [];
  for (let i = 0; i < PROBE_REQUESTS; i++) {
    const t0 = performance.now();
    const r = await a.get('/health');
    if (r.status !== 200) throw new Error(`/health answered ${r.status}`);
    ms.push(performance.now() - t0);
  }
  return { p50_ms: round(quantile(ms, 0.5)), p99_ms: round(quantile(ms, 0.99)) };
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

interface ServerMemory {
  rss_bytes: number;
  /** Anonymous pages (heaps, malloc arenas); the rest of the RSS is file-backed: LMDB maps the journal and the DA store, and the pages it touched count in RSS as reclaimable cache. */
  rss_anon_bytes: number;
  rss_file_bytes: number;
  /** The front's heap. */
  heap_used_bytes: number;
  /** Each answering thread's heap (GET /admin/memory): front, matcher, da, snapshot_writer, consent. */
  threads: { thread: string; heap_used_bytes: number; heap_total_bytes: number; external_bytes: number }[];
}

/** The server's memory, from GET /admin/memory (which asks every worker thread for its heap). */
async function memory(s: StartedServer): Promise<ServerMemory> {
  const r = await api(s.url).get('/admin/memory', adminHeaders(s));
  if (r.status !== 200) throw new Error(`/admin/memory answered ${r.status}`);
  const m = (JSON.parse(r.text) as { data: { rss_bytes: number; rss_anon_bytes: number | null; rss_file_bytes: number | null; threads: ServerMemory['threads'] } }).data;
  const front = m.threads.find((t) => t.thread === 'front');
  return { rss_bytes: m.rss_bytes, rss_anon_bytes: m.rss_anon_bytes ?? 0, rss_file_bytes: m.rss_file_bytes ?? 0, heap_used_bytes: front?.heap_used_bytes ?? 0, threads: m.threads };
}

function recovered(before: { p50_ms: number }, after: { p50_ms: number }): boolean {
  return after.p50_ms <= before.p50_ms * RECOVERY_P50_FACTOR_MAX + 2;
}

async function pool<T>(n: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < n) {
      const i = next++;
      out[i] = await work(i);
    }
  }));
  return out;
}

/** N connections subscribed to a book; a few trades; every connection must see the book move. */
export async function floodWs(n: number): Promise<Record<string, unknown>> {
  const failures: string[] = [];
  const s = await startServer({ config: { limits: { ws_connections_per_ip_max: n + 100 } } });
  try {
    const before = await probe(s);
    const mem0 = await memory(s);
    const t0 = Date.now();
    const conns = await pool(n, () => new Promise<{ ws: WebSocket; updates: number }>((resolve, reject) => {
      const ws = new WebSocket(s.url.replace(/^http/, 'ws') + '/ws');
      const c = { ws, updates: 0 };
      ws.on('message', (d) => {
        const t = String(d);
        if (t.includes('"subscribed"')) resolve(c);
        if (t.includes('book_update') || t.includes('book_snapshot')) c.updates++;
      });
      ws.once('open', () => ws.send(JSON.stringify({ type: 'subscribe', channels: ['book:ETH-USDC'] })));
      ws.once('error', reject);
    }));
    const open_ms = Date.now() - t0;
    const during = await probe(s);
    const mem1 = await memory(s);
    // Book changes fan out to every connection.
    const w = Wallet.random();
    const a = api(s.url);
    await a.post('/deposit', { user: w.address, asset: 'USDC', amount: '100000' }, adminHeaders(s));
    const signer = fastSigner(w);
    for (let i = 0; i < 5; i++) {
      const r = await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: (1000 + i) * 10_000, quantity: 100 }, { signer }));
      if (r.status !== 200) failures.push(`order: ${r.status} ${r.text}`);
    }
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && conns.some((c) => c.updates < 6 && c.ws.readyState === WebSocket.OPEN)) await new Promise((r) => setTimeout(r, 100));
    const missing = conns.filter((c) => c.updates < 6).length;
    if (missing > 0) failures.push(`${missing} of ${n} connections did not see the snapshot and 5 book updates`);
    for (const c of conns) c.ws.terminate();
    await new Promise((r) => setTimeout(r, 2000));
    const after = await probe(s);
    const mem2 = await memory(s);
    if (!recovered(before, after)) failures.push(`/health p50 ${after.p50_ms} ms after the flood, ${before.p50_ms} ms before`);
    return {
      bench: 'flood_ws', connections: n, open_ms, failures: failures.length, failure_list: failures,
      health_before: before, health_during: during, health_after: after,
      rss_mb: { before: mb(mem0.rss_bytes), with_connections: mb(mem1.rss_bytes), after_close: mb(mem2.rss_bytes) },
      rss_per_connection_kb: Math.round((mem1.rss_bytes - mem0.rss_bytes) / n / 102.4) / 10,
    };
  } finally {
    await s.stop();
  }
}

function mb(bytes: number): number {
  return Math.round(bytes / 1048576);
}

/** N fresh wallets, one signed cancel-all each (accepted: every address is an account). */
export async function floodWallets(n: number): Promise<Record<string, unknown>> {
  const failures: string[] = [];
  const s = await startServer();
  try {
    const before = await probe(s);
    const mem0 = await memory(s);
    const a = api(s.url);
    const lat: number[] = [];
    const statuses: Record<string, number> = {};
    const t0 = Date.now();
    // The marginal cost per account: memory after the first third against the end, so the
    // one-time growth (V8's young generation reaching its size, the allocator's arenas) is left out.
    let mem_third: ServerMemory | null = null;
    let done = 0;
    await pool(n, async () => {
      if (++done === Math.floor(n / 3)) mem_third = await memory(s);
      const w = Wallet.random();
      const body = w.cancelAll('ETH-USDC', { signer: fastSigner(w) });
      const t = performance.now();
      const r = await a.post('/orders/cancel-all', body);
      lat.push(performance.now() - t);
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      if (r.status !== 200 && failures.length < 20) failures.push(`${r.status} ${r.text.slice(0, 200)}`);
    });
    const flood_s = (Date.now() - t0) / 1000;
    const mem1 = await memory(s);
    const st = await adminState(s);
    if (st.accounts < n) failures.push(`the server counts ${st.accounts} accounts after ${n} wallets`);
    const after = await probe(s);
    if (!recovered(before, after)) failures.push(`/health p50 ${after.p50_ms} ms after the flood, ${before.p50_ms} ms before`);
    return {
      bench: 'flood_wallets', wallets: n, requests_per_s: Math.round(n / flood_s), statuses, failures: failures.length, failure_list: failures,
      latency_ms: { p50: round(quantile(lat, 0.5)), p99: round(quantile(lat, 0.99)) },
      health_before: before, health_after: after,
      rss_mb: { before: mb(mem0.rss_bytes), after: mb(mem1.rss_bytes) }, heap_mb: { before: mb(mem0.heap_used_bytes), after: mb(mem1.heap_used_bytes) },
      rss_per_wallet_bytes: Math.round((mem1.rss_bytes - mem0.rss_bytes) / n),
      rss_anon_per_wallet_bytes: Math.round((mem1.rss_anon_bytes - mem0.rss_anon_bytes) / n),
      marginal_rss_per_wallet_bytes: mem_third === null ? null : Math.round((mem1.rss_bytes - (mem_third as ServerMemory).rss_bytes) / (n - Math.floor(n / 3))),
      marginal_rss_anon_per_wallet_bytes: mem_third === null ? null : Math.round((mem1.rss_anon_bytes - (mem_third as ServerMemory).rss_anon_bytes) / (n - Math.floor(n / 3))),
      // Where the bytes went: each thread's heap growth per wallet (garbage not yet collected
      // counts too, so small N is noisy; 20,000 wallets gives a stable ratio).
      heap_per_wallet_bytes: Object.fromEntries(mem1.threads.map((t) => {
        const t0 = mem0.threads.find((x) => x.thread === t.thread);
        return [t.thread, Math.round((t.heap_used_bytes - (t0?.heap_used_bytes ?? 0)) / n)];
      })),
    };
  } finally {
    await s.stop();
  }
}

/**
 * A steady flow for `minutes` (20 funded wallets placing, amending and cancelling orders that
 * cross), sampled every minute: RSS (and its anonymous part), heap and the p99 of that minute's
 * requests. Growth past the plateau (the last third's anonymous RSS or heap max above the middle
 * third's max by more than 10% + 32 MiB) fails.
 */
export async function soakHour(minutes: number): Promise<Record<string, unknown>> {
  const failures: string[] = [];
  const s = await startServer({ config: { snapshots: { every_batches: 1000, keep: 2 }, journal: { trim: true } } });
  const samples: {
    minute: number; rss_mb: number; rss_anon_mb: number; rss_file_mb: number; heap_mb: number; heaps_mb: Record<string, number>;
    p99_ms: number; p50_ms: number; requests: number; load_avg_1m: number;
  }[] = [];
  try {
    const a = api(s.url);
    const r = new Rng(20261125);
    const wallets = Array.from({ length: 20 }, () => Wallet.random());
    for (const w of wallets) {
      for (const [asset, amount] of [['USDC', '10000000'], ['ETH', '10000']]) {
        await a.post('/deposit', { user: w.address, asset, amount }, adminHeaders(s));
      }
    }
    const signers = new Map(wallets.map((w) => [w.address, fastSigner(w)]));
    let lat: number[] = [];
    let minute = 0;
    const sample = async (): Promise<void> => {
      const m = await memory(s);
      // heap_mb: every answering thread's heap together (front, matcher, DA, snapshot writer).
      const heaps_mb = Object.fromEntries(m.threads.map((t) => [t.thread, round(t.heap_used_bytes / 1048576)]));
      samples.push({
        minute, rss_mb: mb(m.rss_bytes), rss_anon_mb: mb(m.rss_anon_bytes), rss_file_mb: mb(m.rss_file_bytes), heap_mb: mb(m.threads.reduce((x, t) => x + t.heap_used_bytes, 0)), heaps_mb,
        p99_ms: round(quantile(lat, 0.99)), p50_ms: round(quantile(lat, 0.5)), requests: lat.length, load_avg_1m: round(loadavg()[0]),
      });
      console.error(JSON.stringify(samples[samples.length - 1]));
    };
    await sample(); // minute 0: the server with its 20 funded wallets, before the flow
    const end = Date.now() + minutes * 60_000;
    let minute_end = Date.now() + 60_000;
    while (Date.now() < end) {
      const w = r.pick(wallets);
      const signer = signers.get(w.address)!;
      const body = r.chance(0.9)
        ? w.order({ market_id: 'ETH-USDC', side: r.pick(['bid', 'ask']), price: r.int(1990, 2010) * 10_000, quantity: r.int(1, 5) * 100, time_in_force: r.pick(['gtc', 'ioc']) }, { signer })
        : w.cancelAll('ETH-USDC', { signer });
      const t = performance.now();
      const res = await a.post(body.side !== undefined ? '/orders' : '/orders/cancel-all', body);
      lat.push(performance.now() - t);
      if (res.status >= 500) failures.push(`${res.status} ${res.text.slice(0, 120)}`);
      // ~50 requests per second: a steady flow, not a load test.
      await new Promise((res2) => setTimeout(res2, 20));
      if (Date.now() >= minute_end) {
        minute++;
        await sample();
        lat = [];
        minute_end += 60_000;
      }
    }
    if (samples.length >= 3) {
      const third = Math.floor(samples.length / 3);
      // Anonymous RSS (what the process holds; LMDB's mapped file pages excluded) and the heap.
      for (const key of ['rss_anon_mb', 'heap_mb'] as const) {
        const middle = Math.max(...samples.slice(third, 2 * third).map((x) => x[key]));
        const last = Math.max(...samples.slice(2 * third).map((x) => x[key]));
        if (last > middle * 1.1 + 32) failures.push(`${key} grew past the plateau: ${middle} MB in the middle third, ${last} MB in the last`);
      }
    }
  } finally {
    await s.stop();
  }
  return { bench: 'soak_hour', minutes, failures: failures.length, failure_list: failures.slice(0, 20), samples };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const value = (name: string, fallback: number): number | null => {
    const i = args.indexOf(name);
    if (i < 0) return null;
    const v = Number(args[i + 1]);
    return Number.isFinite(v) && v > 0 ? v : fallback;
  };
  const results: Record<string, unknown>[] = [];
  const ws = value('--ws', 2000);
  const wallets = value('--wallets', 2000);
  const soak = value('--soak', 2);
  if (ws === null && wallets === null && soak === null) {
    console.error('usage: node dist/bench/flood.js [--ws N] [--wallets N] [--soak MINUTES]');
    process.exit(64);
  }
  if (ws !== null) results.push(await floodWs(ws));
  if (wallets !== null) results.push(await floodWallets(wallets));
  if (soak !== null) results.push(await soakHour(soak));
  for (const r of results) console.log(JSON.stringify(r));
  process.exit(results.every((r) => r.failures === 0) ? 0 : 1);
}

runIfMain(import.meta.url, main);
