// The front's whole per-request machinery of a signed order on one thread, without a server,
// sockets, LMDB, verify workers or a matcher (issue 11, branch h22f): the uWS route (context.ts
// postRoute: Reply, abort watch, exchange count, stage stamps, body reader, JSON parse), order
// entry (parseOrder), runSigned (arrival order, the verify stage's callback, admission with the
// wallet's rate limit, consent encode, the ring write's bookkeeping: RequestSubmitter with a stub
// ring writer, the flush microtask), then the commit: PendingAnswers as the read model's observer
// (accepted, order update, batch committed), the answer (orderAnswerBody, Reply.okBody, the corked
// write into a fake response), the stage row and the metrics' stage histograms. Batches of 64
// requests (the load bench's max-rate batches), the load bench's bodies (a client_order_id, a
// 65-byte signature) over 2,000 wallets. What is stubbed: the verify pool (every signature
// verifies over its first message form; verdicts delivered once per batch, as a verify batch's
// callback), the ring's tryWrite (accepts), the read model's apply (an order record per request).
//
// What it is for: instructions per request under callgrind, two-point (docs/benchmarks.md, h22f):
//   valgrind --tool=callgrind node --single-threaded dist/bench/signed_front.js --rounds 1
//   valgrind --tool=callgrind node --single-threaded dist/bench/signed_front.js --rounds 4
// (difference / (3 x requests per round)). Without valgrind it prints CPU ns per request.
//   --requests N  per round (default 4,096, whole batches); --rounds N timed rounds (default 5)
//   --batch N     requests per batch (default 64: max rate; the load bench's half-max phase has
//                 ~5-10): what the per-batch work (verdicts' delivery, flush, commit, release) costs
//                 each request
//   --evict-kb N  after each batch, write N KB of a scratch buffer (default 0): the caches the
//                 front finds after another thread ran on its core (at half the max rate the front
//                 is switched out ~0.6 times per request, h27h); CPU ns only, not for callgrind
// Ends with one JSON line {"bench":"signed_front",...}.
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config/load.js';
import type { GatewayContext } from '../src/gateway/context.js';
import { postRoute } from '../src/gateway/context.js';
import { ArrivalOrder } from '../src/gateway/arrival_order.js';
import { Metrics } from '../src/gateway/metrics/metrics.js';
import { runOrderEntry } from '../src/gateway/order_entry.js';
import { PendingAnswers } from '../src/gateway/outcomes.js';
import { createRateLimiters } from '../src/gateway/rate_limit.js';
import { createFailedSignatureBudget } from '../src/gateway/failed_signatures.js';
import { RequestSubmitter } from '../src/gateway/request_submit.js';
import { StageRecorder, stampMs } from '../src/gateway/stage_timings.js';
import type { SignerFound } from '../src/gateway/agent_signer.js';
import { Knobs } from './knobs.js';
import { medianUpperMiddle } from './quantile.js';

/** Requests per batch by default: the load bench's max-rate batches (--batch: ~6 at half the max rate, h27h). */
const BATCH_DEFAULT = 64;
const WALLETS = 2000;
const T0_MS = 1_764_000_000_000;

/** A uWS HttpResponse as far as the route and the Reply use it. */
class FakeResponse {
  data: ((chunk: ArrayBuffer, last: boolean) => void) | null = null;
  bytes = 0;
  onData(h: (chunk: ArrayBuffer, last: boolean) => void): this {
    this.data = h;
    return this;
  }
  onAborted(): this {
    return this;
  }
  /** Loopback, as uWS gives it for an IPv4 client (the per-IP failed-signature budget reads it). */
  getRemoteAddress(): ArrayBuffer {
    return new Uint8Array([127, 0, 0, 1]).buffer;
  }
  cork(f: () => void): this {
    f();
    return this;
  }
  writeStatus(s: Uint8Array | string): this {
    this.bytes += s.length;
    return this;
  }
  writeHeader(): this {
    return this;
  }
  end(body: Uint8Array | string): this {
    this.bytes += body.length;
    return this;
  }
}

/** uWS's HttpRequest as postRoute reads it. */
function fakeRequest(length: string): unknown {
  return {
    getHeader: (name: string) => (name === 'content-length' ? length : ''),
    getQuery: () => '',
    getParameter: () => '',
    getMethod: () => 'post',
  };
}

interface Order {
  order_id: number; account: number; market: number; side: number; order_type: number; tif: number; price: number; quantity: number;
  filled: number; remaining: number; status: number; client_order_id: string; last_fill_price: number; created_ms: number;
  updated_ms: number; resting_price: number; resting_quantity: number;
}

function main(): void {
  const knobs = new Knobs();
  const BATCH = knobs.number('batch', BATCH_DEFAULT, 1, 1024);
  const per_round = Math.ceil(knobs.number('requests', 4096, BATCH, 65_536) / BATCH) * BATCH;
  const evict = new Uint8Array(knobs.number('evict-kb', 0, 0, 65_536) * 1024);
  let evict_ms = 0;
  const rounds = knobs.number('rounds', 5, 1, 50);
  knobs.finish();

  const cfg = loadConfig({});
  const big = 1_000_000_000;
  const orders = new Map<number, Order>();
  const rm = {
    agents: { any: false }, account_by_address: new Map<string, number>(), orders, markets: [{ id: 'ETH-USDC' }],
    marketIndex: (id: string) => (id === 'ETH-USDC' ? 0 : -1),
  };
  // The verify stage: the batch's callbacks, delivered together once per batch.
  let verdicts: { messages: { at(k: number): string | undefined }; stamps: { verify_start: number; verify_end: number } | null; found: SignerFound }[] = [];
  const signatures = {
    broken: null,
    checkSigners: (messages: { at(k: number): string | undefined }, _sig: string, _address: string, _agents: unknown, stamps: { verify_start: number; verify_end: number } | null, found: SignerFound) => {
      verdicts.push({ messages, stamps, found });
    },
  };
  let answered_batches = 0;
  const pending = new PendingAnswers((e) => {
    throw e;
  }, () => {
    answered_batches++;
  });
  const writer = { tryWrite: () => true, flush: () => undefined, freeSlots: () => 1 << 20 };
  const requests = new RequestSubmitter(pending, rm.account_by_address, 0, false, false, () => undefined);
  requests.attach(writer as never);
  const ctx = {
    cfg, rm, signatures, arrival: new ArrivalOrder(), stages: new StageRecorder({ rows_max: 1024 }), metrics: new Metrics(),
    failed_signatures: createFailedSignatureBudget(cfg.limits),
    limiters: createRateLimiters({ ...cfg.rate_limits, orders_per_wallet: big, cancels_per_wallet: big, deposits_per_wallet: big, withdrawals_per_wallet: big, gets_per_ip: big }, { keys_max: 100_000 }),
    link: { journal_fault: null, requests }, da_backlog_batches: null, open_exchanges: 0, closing: false, access_log: false,
  } as unknown as GatewayContext;
  const handler = postRoute(ctx, { admin: false, stamped: true }, (reply, body) => {
    runOrderEntry(ctx, reply, '/orders', body);
  });

  // The load bench's bodies (bench/load/flow.ts shape), made before timing: request i is wallet
  // i mod 2,000 with nonce i / 2,000 + 1 (a fresh ArrayBuffer per request, as uWS hands one).
  const total = per_round * (rounds + 1);
  // (The making is per request too, so it counts in the two-point figure: kept small, and the
  // same in every build.)
  const bodies: ArrayBuffer[] = [];
  const users = Array.from({ length: WALLETS }, (_, w) => '0x' + 'a'.repeat(32) + (w + 1).toString(16).padStart(8, '0'));
  const signature = `0x${'1b'.repeat(64)}1b`;
  for (let i = 0; i < total; i++) {
    const w = i % WALLETS;
    const n = Math.floor(i / WALLETS) + 1;
    const user = users[w];
    const text = `{"user":"${user}","market_id":"ETH-USDC","side":"${w % 2 === 0 ? 'bid' : 'ask'}","price":${1_990_000_000 + (w % 25) * 10_000},` +
      `"quantity":${100 * (1 + (w % 100))},"order_type":"limit","time_in_force":"gtc","nonce":${n},"client_order_id":"c${n}",` +
      `"signature":"${signature}"}`;
    const b = Buffer.from(text, 'latin1');
    bodies.push(b.buffer.slice(b.byteOffset, b.byteOffset + b.length) as ArrayBuffer);
  }
  let next_body = 0;
  let order_id = 0;
  let seq = 0;
  let batch_id = 0;
  const res_pool: FakeResponse[] = Array.from({ length: BATCH }, () => new FakeResponse());
  const stages = { started_ms: 0, applied_ms: 0, durable_ms: 0 };
  const changed = new Set<number>();

  /** One batch: BATCH requests in, their verdicts, the flush, the commit and the answers. */
  const batch = async (): Promise<number> => {
    const first_seq = seq + 1;
    for (let k = 0; k < BATCH; k++) {
      const chunk = bodies[next_body++];
      const res = new FakeResponse();
      res_pool[k] = res;
      handler(res as never, fakeRequest(String(chunk.byteLength)) as never);
      res.data?.(chunk, true);
    }
    const v = verdicts;
    verdicts = [];
    for (const x of v) {
      // The stamps as a verify worker writes them (real clock reads: the stage histograms see
      // values of the real order, not one far bucket).
      if (x.stamps !== null) {
        x.stamps.verify_start = stampMs();
        x.stamps.verify_end = stampMs();
      }
      x.found(x.messages.at(0) ?? null, 0, null);
    }
    await Promise.resolve(); // the flush microtask
    seq += BATCH;
    batch_id++;
    const time_ms = T0_MS + batch_id;
    pending.observer.batchBegin(batch_id, time_ms);
    for (let s = first_seq; s <= seq; s++) {
      const o: Order = {
        order_id: ++order_id, account: 1 + (s % WALLETS), market: 0, side: s % 2, order_type: 0, tif: 0, price: 2_000_000_000,
        quantity: 1_000_000, filled: 0, remaining: 1_000_000, status: 0, client_order_id: 'c1', last_fill_price: 0,
        created_ms: time_ms, updated_ms: time_ms, resting_price: 0, resting_quantity: 0,
      };
      orders.set(o.order_id, o);
      pending.observer.accepted(s, 1, o.account, o.order_id);
      pending.observer.orderUpdate(s, o as never, 0);
    }
    stages.started_ms = stampMs();
    stages.applied_ms = stampMs();
    stages.durable_ms = stampMs();
    pending.observer.batchCommitted(batch_id, time_ms, changed, stages as never);
    pending.release(batch_id, time_ms, stages as never);
    orders.clear();
    // Another thread's turn on this core: its data through the caches (one write per 64-byte line).
    // Timed apart (wall, one thread): its own cost is taken out of the figure (evict_ns_per_request).
    if (evict.length > 0) {
      const t0 = performance.now();
      for (let i = 0; i < evict.length; i += 64) evict[i] = (evict[i] + 1) & 0xff;
      evict_ms += performance.now() - t0;
    }
    let bytes = 0;
    for (const r of res_pool) bytes += r.bytes;
    return bytes;
  };

  const round = async (): Promise<number> => {
    let bytes = 0;
    for (let i = 0; i < per_round / BATCH; i++) bytes += await batch();
    return bytes;
  };

  void (async () => {
    const check = await round(); // warm-up
    if (answered_batches === 0 || check < per_round * 400) throw new Error(`signed_front: answers missing (${check} bytes)`);
    const ns: number[] = [];
    const evict_ns: number[] = [];
    for (let r = 0; r < rounds; r++) {
      evict_ms = 0;
      const t = process.cpuUsage();
      await round();
      const u = process.cpuUsage(t);
      ns.push(((u.user + u.system) * 1000 - evict_ms * 1e6) / per_round);
      evict_ns.push((evict_ms * 1e6) / per_round);
    }
    const per = medianUpperMiddle(ns);
    console.log(`signed_front: ${per_round} requests per round, ${rounds} rounds: ${Math.round(per)} ns CPU per request (median), answer ${Math.round(check / per_round)} B`);
    console.log(JSON.stringify({ bench: 'signed_front', ns_per_request: Math.round(per), requests_per_round: per_round, rounds, answer_bytes: Math.round(check / per_round),
      batch: BATCH, evict_kb: evict.length / 1024, evict_ns_per_request: Math.round(medianUpperMiddle(evict_ns)) }));
  })().catch((e: unknown) => {
    console.error('signed_front: failed:', e instanceof Error ? e.message : e);
    process.exit(1);
  });
}

main();
