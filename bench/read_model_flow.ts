// The front's read-model path on the load bench's flow, for counting instructions (issue 11,
// branch h21m): the committed event records of a load-bench-like flow are written once to a file
// (`--write`), then a second process (`--read`) feeds them, batch by batch, the way the front's
// MatcherLink.dispatchBatch does: the read model applies each record (its observers: a no-op in
// place of the HTTP answers, then the observer tape), then the tape is replayed to market data and
// a WebSocket fan-out with no subscribers (as in the load bench). No server, no engine in the
// measured process: under `valgrind --tool=callgrind` the difference of two runs over different
// numbers of batches, divided by the requests between them, is the front's read-model
// instructions per request (docs/benchmarks.md, h21m).
//
// The flow (bench/load/flow.ts's WalletFlow, without the signatures): `--wallets` wallets deposit
// USDC and ETH, then each request comes from a random wallet: 15% cancel one of its resting
// orders by client id (oldest first), else a limit order on ETH-USDC, 20% IOC crossing the mid by
// 1-5 ticks (no client id), 80% GTC resting 1-25 ticks away with client id `c<nonce>`; 1-100 lots.
// Requests go in batches of `--batch` (the load bench's batches at max rate are tens of requests).
//
//   npx tsc -p tsconfig.json
//   node dist/bench/read_model_flow.js --write /tmp/rm_flow.bin [--wallets 2000] [--requests 200000] [--batch 32]
//   node dist/bench/read_model_flow.js --read /tmp/rm_flow.bin --batches N [--dist DIR] [--digest]
//   node --expose-gc --min-semi-space-size=64 --max-semi-space-size=64 dist/bench/read_model_flow.js --read FILE --batches N --bytes-batches 200
// `--batches`: request batches fed after the deposits (all of them by default); `--dist`: another
// build's dist/ to feed (an A/B: /work/wt/start/dist); `--digest`: a digest of what the reads would
// answer (market data with the leaderboard's ranking, the book, the orders, the client-id index), which an A/B must agree on;
// `--bytes-batches B`: after the N batches, three rounds of B batches counting the bytes allocated per request. Ends with ONE JSON line.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { Knobs } from './knobs.js';
import { gc, newSpaceUsed } from './byte_count_flags.js';
import { benchConfig } from './flow.js';
import { emptyRequest, OrderType, RequestKind, Side, Tif, type Request } from '../src/engine/types.js';
import { Rng } from '../src/util/prng.js';
import { RECORD_WORDS, type RecordViews } from '../src/ring/records.js';

const MID_UNITS = 2_000_000_000;
const TICK_UNITS = 10_000;
const LOT_UNITS = 100;
const RESTING_KEPT_MAX = 64;
/** File header: magic, deposit batches, request batches, requests, records. */
const MAGIC = 0x52_4d_46_31;
const HEADER_WORDS = 8;

interface Wallet {
  nonce: number;
  resting: string[];
}

function flowRequests(wallets: number, requests: number): Request[] {
  const out: Request[] = [];
  for (let a = 1; a <= wallets; a++) {
    for (const [asset, amount] of [[2, 100_000_000_000], [0, 100_000_000]] as const) {
      out.push({ ...emptyRequest(), kind: RequestKind.DEPOSIT, account: a, asset, amount_units: amount });
    }
  }
  const rng = new Rng(20_261_128);
  const ws: Wallet[] = [];
  for (let a = 0; a <= wallets; a++) ws.push({ nonce: 0, resting: [] });
  for (let i = 0; i < requests; i++) {
    const a = 1 + Math.floor(rng.float() * wallets);
    const w = ws[a];
    const r = emptyRequest();
    r.account = a;
    r.nonce = ++w.nonce;
    if (w.resting.length > 0 && rng.float() < 0.15) {
      r.kind = RequestKind.CANCEL;
      r.market = 0;
      r.client_order_id = w.resting.shift() as string;
    } else {
      const bid = rng.float() < 0.5;
      r.kind = RequestKind.PLACE;
      r.market = 0;
      r.side = bid ? Side.BID : Side.ASK;
      r.order_type = OrderType.LIMIT;
      r.quantity_units = (1 + Math.floor(rng.float() * 100)) * LOT_UNITS;
      if (rng.float() < 0.2) {
        const k = 1 + Math.floor(rng.float() * 5);
        r.price_units = bid ? MID_UNITS + k * TICK_UNITS : MID_UNITS - k * TICK_UNITS;
        r.tif = Tif.IOC;
      } else {
        const k = 1 + Math.floor(rng.float() * 25);
        r.price_units = bid ? MID_UNITS - k * TICK_UNITS : MID_UNITS + k * TICK_UNITS;
        r.tif = Tif.GTC;
        r.client_order_id = `c${r.nonce}`;
        w.resting.push(r.client_order_id);
        if (w.resting.length > RESTING_KEPT_MAX) w.resting.shift();
      }
    }
    out.push(r);
  }
  return out;
}

async function write(file: string, wallets: number, requests: number, batch: number): Promise<void> {
  const { ReplayExecutor } = await import('../src/da/replay.js');
  const { recordsOf } = await import('../test/da/records.js');
  const config = benchConfig();
  const all = flowRequests(wallets, requests);
  const deposits = wallets * 2;
  let words = new Int32Array(1 << 24);
  let n = 0;
  const onRecord = (v: RecordViews, o: number): void => {
    if ((n + 1) * RECORD_WORDS > words.length) {
      const grown = new Int32Array(words.length * 2);
      grown.set(words);
      words = grown;
    }
    words.set(v.i32.subarray(o, o + RECORD_WORDS), n * RECORD_WORDS);
    n++;
  };
  const ex = new ReplayExecutor(config, { state_root: false, onRecord });
  ex.genesis();
  let batch_id = 0;
  const run = (from: number, to: number): number => {
    let batches = 0;
    for (let at = from; at < to; at += batch) {
      const part = all.slice(at, Math.min(at + batch, to));
      ex.apply(++batch_id, 1_795_000_000_000 + 1_000 * batch_id, recordsOf(part), part.length);
      batches++;
    }
    return batches;
  };
  const deposit_batches = 1 + run(0, deposits); // genesis is a batch of its own
  const request_batches = run(deposits, all.length);
  const header = new Int32Array(HEADER_WORDS);
  header.set([MAGIC, deposit_batches, request_batches, requests, n, batch, wallets]);
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, header);
  fs.writeSync(fd, words.subarray(0, n * RECORD_WORDS));
  fs.closeSync(fd);
  console.log(JSON.stringify({ bench: 'read_model_flow', mode: 'write', file, wallets, requests, batch, deposit_batches, request_batches, records: n }));
}

async function read(file: string, batches_wanted: number, dist: string, digest: boolean, bytes_batches: number): Promise<void> {
  const bytes = fs.readFileSync(file);
  const all = new Int32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2);
  const [magic, deposit_batches, request_batches, requests, records, batch] = all.subarray(0, HEADER_WORDS);
  if (magic !== MAGIC) throw new Error(`${file}: not a read_model_flow file`);
  // A copy at an aligned offset (Float64Array views).
  const recs = new Int32Array(records * RECORD_WORDS);
  recs.set(all.subarray(HEADER_WORDS, HEADER_WORDS + records * RECORD_WORDS));
  const imp = async <T>(p: string): Promise<T> => (await import(path.join(dist, p))) as T;
  const { ReadModel } = await imp<typeof import('../src/read_model/read_model.js')>('src/read_model/read_model.js');
  const { ObserverTape } = await imp<typeof import('../src/read_model/observer_tape.js')>('src/read_model/observer_tape.js');
  const { MarketData } = await imp<typeof import('../src/marketdata/market_data.js')>('src/marketdata/market_data.js');
  const { WsFanout } = await imp<typeof import('../src/gateway/ws/fanout.js')>('src/gateway/ws/fanout.js');
  const { EventCursor, EventReader, EventType } = await imp<typeof import('../src/ring/event_records.js')>('src/ring/event_records.js');
  const { viewsOfRecords } = await imp<typeof import('../src/ring/records.js')>('src/ring/records.js');
  const { LIMIT_DEFAULTS } = await imp<typeof import('../src/config/sections.js')>('src/config/sections.js');
  const config = benchConfig();
  const rm = new ReadModel(config.assets, {
    fills_per_account_kept: LIMIT_DEFAULTS.fills_per_account_kept as number,
    trades_per_market_kept: LIMIT_DEFAULTS.trades_per_market_kept as number,
    closed_orders_kept: LIMIT_DEFAULTS.closed_orders_kept as number,
  });
  const tape = new ObserverTape((e) => {
    throw e;
  });
  // In place of the HTTP answers (PendingAnswers.observer, src/gateway): counts what it hears.
  let answered = 0;
  // With --digest, the filled quantities each fill hands its observers (what the answers and the
  // private feeds tell), folded into one number.
  let fills_heard = 0;
  const answers = {
    batchBegin(): void {},
    accepted(): void { answered++; },
    rejected(): void { answered++; },
    fill(_seq: number, _t: unknown, taker_filled: number, maker_filled: number): void {
      if (digest) fills_heard = (fills_heard * 31 + taker_filled * 7 + maker_filled) % 4_294_967_291;
    },
    orderUpdate(): void {},
    balance(): void {},
    batchCommitted(): void {},
  };
  rm.observe([answers, tape]);
  const md = new MarketData(rm, { now: () => 0, leaderboard_trades_max: LIMIT_DEFAULTS.leaderboard_trades_max as number });
  let published = 0;
  const app = { publish: (): boolean => { published++; return true; } };
  const fanout = new WsFanout(app as never, rm, 50, { published: 0, delivered: 0, subscriptions: 0 });
  tape.observe([md, fanout]);
  const fields = new EventCursor(new EventReader(viewsOfRecords(recs)));
  const batches = Math.min(batches_wanted, request_batches);
  const stop_after = deposit_batches + batches;
  let done = 0;
  let k = 0;
  const feed = (until: number): void => {
    for (; k < records && done < until; k++) {
      fields.o = k * RECORD_WORDS;
      rm.apply(fields, fields.seq());
      if (fields.type() === EventType.BATCH_COMMITTED) {
        tape.replay();
        done++;
      }
    }
  };
  feed(stop_after);
  // Bytes allocated per request: rounds of `bytes_batches` batches after the fed ones, each between
  // full collections with no scavenge inside (BYTE_COUNT_FLAGS' 64 MB semi-space), the heap's growth
  // over the round (what a scavenge would have to look at: survivors and garbage alike).
  const bytes_per_request: number[] = [];
  for (let round = 0; round < (bytes_batches > 0 ? 3 : 0); round++) {
    gc();
    const young0 = newSpaceUsed();
    const heap0 = v8.getHeapStatistics().used_heap_size;
    const from = done;
    feed(done + bytes_batches);
    if (done - from < bytes_batches) throw new Error('read_model_flow: the file ends before the byte rounds do (fewer --batches)');
    if (newSpaceUsed() < young0) throw new Error('read_model_flow: a scavenge ran inside a byte round (fewer --bytes-batches)');
    bytes_per_request.push(Math.round((v8.getHeapStatistics().used_heap_size - heap0) / (bytes_batches * batch)));
  }
  const fed_requests = Math.min(requests, batches * batch);
  // What the model keeps, when gc() is there (--expose-gc; off when counting instructions).
  let held_heap_mb: number | null = null;
  if ((globalThis as { gc?: () => void }).gc !== undefined) {
    gc();
    held_heap_mb = Math.round(v8.getHeapStatistics().used_heap_size / 1e5) / 10;
  }
  // What the reads would answer, as one digest (an A/B must agree on it): market data's state, the
  // book, every held order and the client-id index.
  const h = createHash('sha256');
  if (digest) {
  h.update(JSON.stringify(md.exportState(), (_k, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v)));
  // The leaderboard's answer (GET /leaderboard, every account): its sums are not in exportState.
  h.update(JSON.stringify(md.leaderboard.top(Number.MAX_SAFE_INTEGER, (a) => `a${a}`)));
  h.update(JSON.stringify(rm.sortedBook(0, 1000)));
  h.update(`heard ${fills_heard}`);
  for (const o of rm.orders.values()) h.update(JSON.stringify(o));
  const ix = rm.exportIndexes();
  h.update(JSON.stringify([ix.client_id_keys, Array.from(ix.client_id_orders), Array.from(ix.closed_order_ids)]));
  h.update(JSON.stringify([...rm.nonce_high_water], null, 0));
  for (const [a, b] of rm.balances) h.update(`${a}:${Array.from(b).join()}:${Array.from(rm.balance_seen.get(a) ?? []).join()}`);
  for (const [a, set] of rm.open_orders_by_account) h.update(`o${a}:${[...set].join()}`);
  for (const [a, set] of rm.order_ids_by_account) h.update(`i${a}:${[...set].join()}`);
  for (const [a, f] of rm.fills_by_account) h.update(`f${a}:${f.length}:${JSON.stringify(f.at(f.length - 1))}`);
  }
  console.log(JSON.stringify({
    bench: 'read_model_flow', mode: 'read', dist, requests: fed_requests, batches, events: k, answered, published,
    orders_held: rm.orders.size, leaderboard_fills: md.leaderboard.size, book_sequence: rm.markets[0].book_sequence,
    bid_levels: rm.markets[0].bids.size, ask_levels: rm.markets[0].asks.size,
    bytes_per_request: bytes_per_request.length === 0 ? null : bytes_per_request, held_heap_mb, state_digest: digest ? h.digest('hex').slice(0, 16) : null,
  }));
}

const knobs = new Knobs();
const write_file = knobs.optionalString('write');
const read_file = knobs.optionalString('read');
const wallets = knobs.number('wallets', 2000, 1, 4000, { integer: true });
const requests = knobs.number('requests', 200_000, 1, 10_000_000, { integer: true });
const batch = knobs.number('batch', 32, 1, 4096, { integer: true });
const batches = knobs.number('batches', Number.MAX_SAFE_INTEGER, 0, Number.MAX_SAFE_INTEGER, { integer: true });
const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(knobs.optionalString('dist') ?? path.resolve(here, '..'));
/** Digest what the reads would answer (off when counting: it costs more the more batches were fed). */
const do_digest = knobs.flag('digest');
/** Batches per byte-counting round (0: none; run under BYTE_COUNT_FLAGS, e.g. 200). */
const bytes_batches = knobs.number('bytes-batches', 0, 0, 100_000, { integer: true });
knobs.finish();
if (write_file !== undefined) await write(write_file, wallets, requests, batch);
else if (read_file !== undefined) await read(read_file, batches, dist, do_digest, bytes_batches);
else throw new Error('read_model_flow: --write FILE or --read FILE');
