// WebSocket fan-out benchmark: messages delivered per second to 100 and 1,000 subscribers of
// `book:ETH-USDC` + `trades:ETH-USDC` while orders flow, and the latency from the match (the
// batch's engine time) to the subscriber.
//
//   npx tsc -p tsconfig.json && node dist/bench/ws_fanout.js [--seconds 5] [--rate 1500] [--workers 2]
//
// Set-up: the real server (RingbookServer: matcher thread, LMDB journal, read model, WsHub on the
// uWS app) runs in this process on a free port. The order flow is submitted straight to the
// matcher link (no HTTP, no signatures: this measures the fan-out, not the order entry): pairs of
// a maker ask and a crossing taker bid at 3,000 USDC, from 8 + 8 accounts, at `--rate` pairs per
// second, so every pair is one trade; 5 static levels per side keep the snapshots realistic but
// small. Each batch then publishes its trades and one book snapshot.
//
// Subscribers are raw WebSocket clients (net + a minimal frame parser, no per-message JSON) in
// `--workers` worker threads, so the clients cost as little as possible next to the server; every
// frame is counted, and every 10th connection also parses its trade messages and records
// (receive time - trade timestamp) for the latency figures. The trade timestamp is the batch's
// engine time at 1 ms resolution (taken when the batch starts, before matching), so the latency
// spans batching, matching, the journal commit, the read model, the fan-out and the client, and
// may read up to 1 ms high.
//
// Output: figures per subscriber count, PASS/MISS against the target (>= 1,000,000 messages/s
// delivered to 1,000 subscribers), and one JSON line `{"bench":"ws_fanout",...}`.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import hdr from 'hdr-histogram-js';
import { defaultConfigPath, mergeConfig } from '../src/config/load.js';
import { validateConfig } from '../src/config/read.js';
import { emptyRequest, OrderType, RequestKind, Side, Tif } from '../src/engine/types.js';
import type { MatcherLink } from '../src/gateway/matcher_link.js';
import { RingbookServer } from '../src/gateway/server.js';
import { EventType } from '../src/ring/event_records.js';
import type { WsHub } from '../src/gateway/ws/hub.js';
import { runMain } from './cli_args.js';
import { Knobs } from './knobs.js';

const TARGET_DELIVERED_PER_S = 1_000_000;
let SUBSCRIBER_COUNTS = [100, 1000];
const SAMPLE_EVERY = 10;
const PRICE = 3000_000000;
const TICK = 10_000;
const QTY = 100;
const STATIC_LEVELS = 5;
const ACCOUNTS_PER_SIDE = 8;
const INFLIGHT_MAX = 4096;

// ---------------------------------------------------------------------------------------------
// Worker: raw WebSocket subscribers

interface WorkerInit {
  counters: SharedArrayBuffer;
  slot: number;
}

type WorkerCommand =
  | { cmd: 'connect'; port: number; count: number; first_index: number }
  | { cmd: 'measure' }
  | { cmd: 'stop' }
  | { cmd: 'close' };

const SUBSCRIBE = Buffer.from(JSON.stringify({ type: 'subscribe', channels: ['book:ETH-USDC', 'trades:ETH-USDC'] }));
const TRADE_PREFIX = Buffer.from('{"type":"trade"');
const TS_KEY = Buffer.from('"timestamp":"');

/** A masked client text frame (mask key 0: XOR with zero, allowed by RFC 6455). */
function clientFrame(payload: Buffer): Buffer {
  if (payload.length > 125) throw new Error('bench frames stay small');
  const f = Buffer.alloc(6 + payload.length);
  f[0] = 0x81;
  f[1] = 0x80 | payload.length;
  payload.copy(f, 6);
  return f;
}

class RawSubscriber {
  frames = 0;
  bytes = 0;
  private handshake: Buffer | null = Buffer.alloc(0);
  private pending: Buffer | null = null;
  private skip = 0;
  readonly socket: net.Socket;

  constructor(port: number, private readonly sampled: boolean, private readonly onLatency: (ms: number) => void,
    private readonly onFrames: (n: number, bytes: number) => void, onReady: () => void, onError: (e: Error) => void) {
    const key = randomBytes(16).toString('base64');
    const socket = net.connect(port, '127.0.0.1');
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('error', onError);
    socket.on('connect', () => {
      socket.write(`GET /ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    socket.on('data', (chunk: Buffer) => {
      if (this.handshake !== null) {
        const all = Buffer.concat([this.handshake, chunk]);
        const end = all.indexOf('\r\n\r\n');
        if (end < 0) {
          this.handshake = all;
          return;
        }
        if (!all.subarray(0, 12).toString().startsWith('HTTP/1.1 101')) {
          onError(new Error(`upgrade refused: ${all.subarray(0, end).toString().split('\r\n')[0]}`));
          return;
        }
        this.handshake = null;
        socket.write(clientFrame(SUBSCRIBE));
        onReady();
        chunk = all.subarray(end + 4);
        if (chunk.length === 0) return;
      }
      this.read(chunk);
    });
  }

  /** Counts frames; sampled connections also parse trade timestamps. */
  private read(chunk: Buffer): void {
    const buf = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    this.pending = null;
    let i = 0;
    const n = buf.length;
    let frames = 0;
    if (this.skip > 0) {
      const k = Math.min(this.skip, n);
      this.skip -= k;
      i = k;
    }
    while (i < n) {
      if (n - i < 2) break;
      const b1 = buf[i + 1] & 0x7f;
      let header = 2;
      let len = b1;
      if (b1 === 126) {
        header = 4;
        if (n - i < 4) break;
        len = buf.readUInt16BE(i + 2);
      } else if (b1 === 127) {
        header = 10;
        if (n - i < 10) break;
        len = Number(buf.readBigUInt64BE(i + 2));
      }
      if (this.sampled) {
        if (n - i < header + len) break; // whole frame needed to read it
        const start = i + header;
        if (buf.compare(TRADE_PREFIX, 0, TRADE_PREFIX.length, start, start + TRADE_PREFIX.length) === 0) {
          const at = buf.indexOf(TS_KEY, start);
          if (at >= 0 && at < start + len) {
            const ts = buf.toString('latin1', at + TS_KEY.length, at + TS_KEY.length + 24);
            this.onLatency(performance.timeOrigin + performance.now() - Date.parse(ts));
          }
        }
        frames++;
        i += header + len;
      } else {
        frames++;
        if (n - i >= header + len) {
          i += header + len;
        } else {
          this.skip = header + len - (n - i);
          i = n;
        }
      }
    }
    if (i < n) this.pending = Buffer.from(buf.subarray(i));
    this.frames += frames;
    this.bytes += chunk.length;
    this.onFrames(frames, chunk.length);
  }
}

function workerMain(init: WorkerInit): void {
  const counters = new Float64Array(init.counters);
  const slot = init.slot * 2;
  let subs: RawSubscriber[] = [];
  let latencies: number[] = [];
  let measuring = false;
  const port = parentPort!;
  port.on('message', (m: WorkerCommand) => {
    if (m.cmd === 'connect') {
      let ready = 0;
      const onFrames = (n: number, bytes: number): void => {
        counters[slot] += n;
        counters[slot + 1] += bytes;
      };
      const onLatency = (ms: number): void => {
        if (measuring) latencies.push(ms);
      };
      for (let k = 0; k < m.count; k++) {
        const sampled = (m.first_index + k) % SAMPLE_EVERY === 0;
        subs.push(new RawSubscriber(m.port, sampled, onLatency, onFrames, () => {
          ready++;
          if (ready === m.count) {
            // Each subscriber is answered with `subscribed` + a snapshot: wait for both.
            const wait = (): void => {
              if (subs.every((s) => s.frames >= 2)) port.postMessage({ type: 'ready' });
              else setTimeout(wait, 5);
            };
            wait();
          }
        }, (e) => port.postMessage({ type: 'error', message: e.message })));
      }
    } else if (m.cmd === 'measure') {
      latencies = [];
      measuring = true;
    } else if (m.cmd === 'stop') {
      measuring = false;
      const out = Float64Array.from(latencies);
      latencies = [];
      port.postMessage({ type: 'latencies', values: out }, [out.buffer]);
    } else if (m.cmd === 'close') {
      for (const s of subs) s.socket.destroy();
      subs = [];
      port.postMessage({ type: 'closed' });
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Main: server, order flow, phases

interface Args {
  seconds: number;
  rate: number;
  latency_rate: number;
  workers: number;
}

/** bench/knobs.ts: `--seconds S` or BENCH_SECONDS=S, and so on. */
function parseArgs(): Args {
  const knobs = new Knobs();
  const args: Args = {
    seconds: knobs.number('seconds', 5, 0.5, 600, { integer: false }),
    rate: knobs.number('rate', 1000, 1, 200_000),
    latency_rate: knobs.number('latency-rate', 100, 1, 200_000),
    workers: knobs.number('workers', 2, 1, 64),
  };
  SUBSCRIBER_COUNTS = knobs.numbers('subscribers', SUBSCRIBER_COUNTS, 1, 1_000_000);
  knobs.finish();
  return args;
}

class WorkerHandle {
  readonly worker: Worker;
  private waiters = new Map<string, (m: any) => void>();

  constructor(init: WorkerInit) {
    this.worker = new Worker(new URL(import.meta.url), { workerData: init });
    this.worker.on('message', (m: { type: string; message?: string }) => {
      if (m.type === 'error') {
        console.error(`subscriber error: ${m.message}`);
        return;
      }
      const w = this.waiters.get(m.type);
      if (w) {
        this.waiters.delete(m.type);
        w(m);
      }
    });
  }

  ask<T>(cmd: WorkerCommand, reply: string): Promise<T> {
    return new Promise((resolve) => {
      this.waiters.set(reply, resolve);
      this.worker.postMessage(cmd);
    });
  }
}

function addressBytes(): { bytes: Uint8Array; hex: string } {
  const bytes = randomBytes(20);
  return { bytes, hex: '0x' + bytes.toString('hex') };
}

interface PhaseResult {
  subscribers: number;
  kind: 'throughput' | 'latency';
  offered_pairs_per_s: number;
  seconds: number;
  delivered: number;
  delivered_per_s: number;
  published_per_s: number;
  trades_per_s: number;
  batches_per_s: number;
  mb_per_s: number;
  latency_ms: { p50: number; p90: number; p99: number; max: number; samples: number };
  dropped_slow: number;
  /** Event-loop utilization of the server's front thread (uWS, read model, fan-out). */
  front_elu: number;
}

async function main(): Promise<void> {
  const args = parseArgs();
  const say = (s = ''): void => console.log(s);
  say(`ringbook ws_fanout bench: node ${process.version}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? '?'}), load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  say(`flow: ${args.rate} maker+taker pairs/s (one trade each), ${args.seconds} s per phase; subscribers in ${args.workers} worker threads; book:ETH-USDC + trades:ETH-USDC`);

  const data_dir = mkdtempSync(path.join(os.tmpdir(), 'ringbook-wsbench-'));
  const raw = JSON.parse(readFileSync(defaultConfigPath(), 'utf8'));
  const cfg = validateConfig(mergeConfig(raw, {
    server: { host: '127.0.0.1', port: 0, data_dir },
    limits: { ws_connections_per_ip_max: 5000 },
  }));
  const server = new RingbookServer({ cfg, admin_token: 'bench', operator_key: '0x' + '11'.repeat(32), verify_threads: 1 });
  const port = await server.start();
  const internals = server as unknown as { link: MatcherLink; ws_hub: WsHub };
  const link = internals.link;
  const hub = internals.ws_hub;
  let batches = 0;
  let fills = 0;
  let rejected = 0;
  link.addBatchListener(() => {
    batches++;
  });
  link.addEventListener((e) => {
    const type = e.type();
    if (type === EventType.FILL) fills++;
    else if (type === EventType.REJECTED) rejected++;
  });

  // Accounts and the static book.
  const makers = Array.from({ length: ACCOUNTS_PER_SIDE }, addressBytes);
  const takers = Array.from({ length: ACCOUNTS_PER_SIDE }, addressBytes);
  const nonces = new Map<string, number>();
  const submit = (who: { bytes: Uint8Array; hex: string }, fill: (r: ReturnType<typeof emptyRequest>) => void): Promise<unknown> => {
    const r = emptyRequest();
    fill(r);
    if (r.kind === RequestKind.PLACE) {
      const n = (nonces.get(who.hex) ?? 0) + 1;
      nonces.set(who.hex, n);
      r.nonce = n;
    }
    const p = link.requests.submit(r, who.bytes, who.hex);
    if (p === null) throw new Error('request ring full');
    return p;
  };
  const deposits: Promise<unknown>[] = [];
  for (const a of [...makers, ...takers]) {
    deposits.push(submit(a, (r) => { r.kind = RequestKind.DEPOSIT; r.asset = 0; r.amount_units = 100_000_000_000; }));
    deposits.push(submit(a, (r) => { r.kind = RequestKind.DEPOSIT; r.asset = 2; r.amount_units = 10_000_000_000_000; }));
  }
  await Promise.all(deposits);
  const statics: Promise<unknown>[] = [];
  for (let k = 1; k <= STATIC_LEVELS; k++) {
    statics.push(submit(makers[0], (r) => place(r, Side.ASK, PRICE + k * TICK, 10 * QTY)));
    statics.push(submit(takers[0], (r) => place(r, Side.BID, PRICE - k * TICK, 10 * QTY)));
  }
  await Promise.all(statics);
  if (rejected > 0) throw new Error(`${rejected} set-up requests rejected`);

  function place(r: ReturnType<typeof emptyRequest>, side: number, price: number, quantity: number): void {
    r.kind = RequestKind.PLACE;
    r.market = 0;
    r.side = side;
    r.order_type = OrderType.LIMIT;
    r.tif = Tif.GTC;
    r.price_units = price;
    r.quantity_units = quantity;
  }

  // Order flow at a fixed rate of pairs per second, bounded in flight.
  let flowing = false;
  let inflight = 0;
  let pairs = 0;
  let flow_t0 = 0;
  let current_rate = args.rate;
  const flow = (): void => {
    if (!flowing) return;
    const due = Math.floor(((performance.now() - flow_t0) / 1000) * current_rate) - pairs;
    for (let i = 0; i < due && inflight < INFLIGHT_MAX; i++) {
      const m = makers[pairs % makers.length];
      const t = takers[pairs % takers.length];
      inflight += 2;
      const done = (): void => {
        inflight--;
      };
      void submit(m, (r) => place(r, Side.ASK, PRICE, QTY)).then(done);
      void submit(t, (r) => place(r, Side.BID, PRICE, QTY)).then(done);
      pairs++;
    }
    setTimeout(flow, 1);
  };

  const counters = new SharedArrayBuffer(8 * 2 * args.workers);
  const counts = new Float64Array(counters);
  const workers = Array.from({ length: args.workers }, (_, slot) => new WorkerHandle({ counters, slot }));
  const total = (): { frames: number; bytes: number } => {
    let frames = 0;
    let bytes = 0;
    for (let w = 0; w < args.workers; w++) {
      frames += counts[w * 2];
      bytes += counts[w * 2 + 1];
    }
    return { frames, bytes };
  };

  /** One measured phase at `rate` pairs/s with the current subscribers (after a 1 s warm-up). */
  async function phase(n: number, rate: number, seconds: number, kind: 'throughput' | 'latency'): Promise<PhaseResult> {
    flowing = true;
    pairs = 0;
    current_rate = rate;
    flow_t0 = performance.now();
    flow();
    await new Promise((r) => setTimeout(r, 1000));
    const dropped0 = hub.stats.dropped_slow;
    const pub0 = hub.stats.published;
    const fills0 = fills;
    const batches0 = batches;
    for (const w of workers) w.worker.postMessage({ cmd: 'measure' });
    const c0 = total();
    const elu0 = performance.eventLoopUtilization();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const c1 = total();
    const t1 = performance.now();
    const elu = performance.eventLoopUtilization(elu0).utilization;
    const fills1 = fills;
    const batches1 = batches;
    const pub1 = hub.stats.published;
    const lat = await Promise.all(workers.map((w) => w.ask<{ values: Float64Array }>({ cmd: 'stop' }, 'latencies')));
    flowing = false;
    while (inflight > 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 300)); // let the subscribers drain
    const secs = (t1 - t0) / 1000;
    const h = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: 3 });
    let samples = 0;
    for (const l of lat) {
      for (const v of l.values) {
        h.recordValue(Math.max(1, Math.round(v * 1000))); // microseconds
        samples++;
      }
    }
    const ms = (p: number): number => Math.round(h.getValueAtPercentile(p) / 10) / 100;
    const r: PhaseResult = {
      subscribers: n,
      kind,
      offered_pairs_per_s: rate,
      seconds: Math.round(secs * 100) / 100,
      delivered: c1.frames - c0.frames,
      delivered_per_s: Math.round((c1.frames - c0.frames) / secs),
      published_per_s: Math.round((pub1 - pub0) / secs),
      trades_per_s: Math.round((fills1 - fills0) / secs),
      batches_per_s: Math.round((batches1 - batches0) / secs),
      mb_per_s: Math.round(((c1.bytes - c0.bytes) / secs / 1e6) * 10) / 10,
      latency_ms: { p50: ms(50), p90: ms(90), p99: ms(99), max: Math.round(h.maxValue / 10) / 100, samples },
      // Closed by the hub as slow, or by uWS at its backpressure limit: either way gone.
      dropped_slow: Math.max(hub.stats.dropped_slow - dropped0, n - hub.stats.connections),
      front_elu: Math.round(elu * 100) / 100,
    };
    say(`${String(n).padStart(5)} subscribers, ${kind.padEnd(10)} (${rate} pairs/s offered): ` +
      `${r.delivered_per_s.toLocaleString('en-US')} messages/s delivered (${r.mb_per_s} MB/s), ${r.published_per_s} published/s ` +
      `(${r.trades_per_s} trades/s, ${r.batches_per_s} batches/s); match->subscriber p50 ${r.latency_ms.p50} ms, ` +
      `p90 ${r.latency_ms.p90} ms, p99 ${r.latency_ms.p99} ms, max ${r.latency_ms.max} ms (${samples} samples); ` +
      `front thread busy ${Math.round(r.front_elu * 100)}%; dropped ${r.dropped_slow}; rejected ${rejected}`);
    return r;
  }

  /**
   * The transport alone: the same trade message published on the trades topic at `rate` per
   * second in bursts every 10 ms straight through uWS (no matcher, journal, read model or
   * serialization), to show what this machine's loopback and clients allow.
   */
  async function transportOnly(n: number, rate: number, seconds: number): Promise<{ subscribers: number; delivered_per_s: number; elu: number }> {
    const app = (hub as unknown as { app: { publish(topic: string, message: string): boolean } }).app;
    const message = `{"type":"trade","market_id":"ETH-USDC","trade_id":"1","price":"${PRICE}","quantity":"${QTY}","side":"bid","timestamp":"${new Date().toISOString()}"}`;
    let sent = 0;
    let on = true;
    const started = performance.now();
    const tick = (): void => {
      if (!on) return;
      const due = Math.floor(((performance.now() - started) / 1000) * rate) - sent;
      for (let i = 0; i < due; i++) app.publish('trades:ETH-USDC', message);
      sent += Math.max(0, due);
      setTimeout(tick, 10); // bursts every 10 ms, like batches

    };
    tick();
    await new Promise((r) => setTimeout(r, 1000));
    const c0 = total();
    const elu0 = performance.eventLoopUtilization();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const c1 = total();
    const secs = (performance.now() - t0) / 1000;
    const elu = performance.eventLoopUtilization(elu0).utilization;
    on = false;
    await new Promise((r) => setTimeout(r, 300));
    const out = { subscribers: n, delivered_per_s: Math.round((c1.frames - c0.frames) / secs), elu: Math.round(elu * 100) / 100 };
    say(`${String(n).padStart(5)} subscribers, transport only (${rate} messages/s published, no engine): ${out.delivered_per_s.toLocaleString('en-US')} messages/s delivered; front thread busy ${Math.round(elu * 100)}%`);
    return out;
  }

  const results: PhaseResult[] = [];
  const transport: { subscribers: number; delivered_per_s: number; elu: number }[] = [];
  try {
    for (const n of SUBSCRIBER_COUNTS) {
      // Connect n subscribers, spread over the workers.
      const per = Math.ceil(n / args.workers);
      const ready: Promise<unknown>[] = [];
      for (let w = 0; w < args.workers; w++) {
        const count = Math.min(per, n - w * per);
        if (count > 0) ready.push(workers[w].ask({ cmd: 'connect', port, count, first_index: w * per }, 'ready'));
      }
      await Promise.all(ready);
      if (hub.stats.connections !== n) throw new Error(`expected ${n} connections, hub has ${hub.stats.connections}`);
      results.push(await phase(n, args.rate, args.seconds, 'throughput'));
      results.push(await phase(n, args.latency_rate, args.seconds, 'latency'));
      transport.push(await transportOnly(n, args.rate, args.seconds));
      await Promise.all(workers.map((w) => w.ask({ cmd: 'close' }, 'closed')));
      while (hub.stats.connections > 0) await new Promise((r2) => setTimeout(r2, 10));
    }
  } finally {
    flowing = false;
    for (const w of workers) await w.worker.terminate();
    await server.stop();
    rmSync(data_dir, { recursive: true, force: true });
  }
  const find = (n: number, kind: string): PhaseResult => results.find((r) => r.subscribers === n && r.kind === kind) as PhaseResult;
  const big = find(1000, 'throughput') as PhaseResult | undefined;
  const pass = big !== undefined && big.delivered_per_s >= TARGET_DELIVERED_PER_S && big.dropped_slow === 0;
  say(`target: >= ${TARGET_DELIVERED_PER_S.toLocaleString('en-US')} messages/s delivered to 1,000 subscribers: ${pass ? 'PASS' : 'MISS'} (${big?.delivered_per_s.toLocaleString('en-US') ?? 'not run'})`);
  const json: Record<string, unknown> = {
    bench: 'ws_fanout', rate_pairs_per_s: args.rate, latency_rate_pairs_per_s: args.latency_rate, seconds: args.seconds,
    workers: args.workers, cores: os.availableParallelism(), load1: Math.round(os.loadavg()[0] * 10) / 10,
  };
  for (const n of SUBSCRIBER_COUNTS) {
    const t = find(n, 'throughput');
    const l = find(n, 'latency');
    json[`delivered_per_s_${n}`] = t.delivered_per_s;
    json[`trades_per_s_${n}`] = t.trades_per_s;
    json[`front_busy_${n}`] = t.front_elu;
    json[`latency_ms_p50_${n}`] = l.latency_ms.p50;
    json[`latency_ms_p99_${n}`] = l.latency_ms.p99;
    json[`latency_ms_p50_${n}_at_rate`] = t.latency_ms.p50;
    json[`latency_ms_p99_${n}_at_rate`] = t.latency_ms.p99;
    json[`dropped_${n}`] = t.dropped_slow + l.dropped_slow;
    json[`transport_only_delivered_per_s_${n}`] = transport.find((x) => x.subscribers === n)?.delivered_per_s;
  }
  json.target_delivered_per_s_1000 = TARGET_DELIVERED_PER_S;
  json.result = pass ? 'PASS' : 'MISS';
  console.log(JSON.stringify(json));
  process.exit(0);
}

if (isMainThread) {
  runMain(main);
} else {
  workerMain(workerData as WorkerInit);
}
