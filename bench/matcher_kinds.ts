// The matcher bench's time per kind of request (`--only fast,native,kinds`): where the fast
// engine's gap to the C reference is, kind by kind (issue 15).
//
// Why sampling and not a timer per request: performance.now() costs 90-150 ns a call here, as
// much as a request, and would swamp what it measures. Instead the timed replay stores the row
// index it is on in a SharedArrayBuffer word (one store per row), and a worker thread reads that
// word every ~20 µs asked (Atomics.wait's timeout; the kernel's timer slack makes it ~70 µs) and
// credits that row's kind with the CPU time the replaying thread used since its previous reading:
// each kind's share of the replay's CPU time. The C reference does the same
// (native-bench/matcher_book.c --sample-kinds: one relaxed store per row, a pthread that sleeps
// and reads), on the same classes file, so both sides are split by one method. A kind's time per
// request = its share x the engine's ns per request (from the bench's unsampled runs) / its
// share of the requests.
//
// Kinds are fixed by an untimed pass with a sink that follows every order's price and remaining
// quantity (an amend is "size only" when it keeps its price and does not grow: it keeps its
// place) and counts the fills each request makes. That pass runs in a worker
// (bench/matcher_kinds_worker.ts), as the flow's generating pass does (bench/flow.ts says why):
// the timing thread's engine code only ever sees the counting sink.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { MatchingEngine } from '../src/engine/api.js';
import { createFastEngine } from '../src/engine/engine.js';
import { OrderType, RequestKind, Tif, emptyRequest, type Request } from '../src/engine/types.js';
import type { EventSink } from '../src/engine/events.js';
import { CountingSink, benchConfig, loadRequest, type Flow } from './flow.js';
import { nativeTool } from './native.js';
import { medianUpperMiddle } from './quantile.js';

export const KIND_NAMES = [
  'limit GTC, rests',
  'limit GTC, crosses 1 maker',
  'limit GTC, crosses 2+ makers',
  'limit IOC',
  'limit FOK',
  'market IOC',
  'market FOK',
  'cancel',
  'amend, size only',
  'amend, moves and rests',
  'amend, moves and crosses',
] as const;
const K_GTC_REST = 0;
const K_GTC_CROSS_1 = 1;
const K_GTC_CROSS_N = 2;
const K_IOC = 3;
const K_FOK = 4;
const K_MARKET_IOC = 5;
const K_MARKET_FOK = 6;
const K_CANCEL = 7;
const K_AMEND_SIZE = 8;
const K_AMEND_MOVE = 9;
const K_AMEND_MOVE_CROSS = 10;
const KIND_COUNT = KIND_NAMES.length;

/** Asked sampling period (Atomics.wait's timeout; the C sampler asks the same 20 µs). */
const SAMPLE_PERIOD_MS = 0.02;
/** Samples kept per sampled replay (one Int32 each): ~1 M requests at ~70 µs a sample need < 10 k. */
const SAMPLES_MAX = 1 << 20;

export interface FlowKinds {
  /** One kind (index into KIND_NAMES) per measured row. */
  kinds: Uint8Array;
  /** Rows per kind. */
  rows: number[];
  /** Fills per kind (makers filled by the kind's requests). */
  fills: number[];
}

/** Follows each order's price and remaining quantity, and counts fills and rejections. */
class FollowingSink implements EventSink {
  readonly price: Float64Array;
  readonly remaining: Float64Array;
  fills = 0;
  rejected_n = 0;

  constructor(max_order_id: number) {
    this.price = new Float64Array(max_order_id + 1);
    this.remaining = new Float64Array(max_order_id + 1);
  }

  orderUpdate(order_id: number, _account: number, _market: number, _side: number, _status: number,
    price_units: number, _quantity_units: number, _filled_units: number, remaining_units: number): void {
    this.price[order_id] = price_units;
    this.remaining[order_id] = remaining_units;
  }
  fill(): void {
    this.fills++;
  }
  rejected(): void {
    this.rejected_n++;
  }
  accepted(): void {}
  balance(): void {}
  referral(): void {}
  referralShare(): void {}
  inboxQueued(): void {}
  inboxIncluded(): void {}
  agent(): void {}
}

/** The kind of every measured row (an untimed replay on a fresh fast engine). */
export function classifyFlow(f: Flow): FlowKinds {
  let max_id = 0;
  for (let i = 0; i < f.length; i++) if (f.new_order_id[i] > max_id) max_id = f.new_order_id[i];
  const engine = createFastEngine(benchConfig());
  const sink = new FollowingSink(max_id);
  const r = emptyRequest();
  const kinds = new Uint8Array(f.length - f.setup_end);
  const rows = new Array<number>(KIND_COUNT).fill(0);
  const fills = new Array<number>(KIND_COUNT).fill(0);
  for (let i = 0; i < f.length; i++) {
    loadRequest(r, f, i);
    let size_only = false;
    if (r.kind === RequestKind.AMEND) {
      size_only = sink.price[r.order_id] === r.price_units && r.quantity_units <= sink.remaining[r.order_id];
    }
    const fills_before = sink.fills;
    const rejected_before = sink.rejected_n;
    engine.apply(r, sink);
    if (i < f.setup_end) continue;
    if (sink.rejected_n !== rejected_before) throw new Error(`row ${i} was rejected: the flow has no rejections`);
    const n = sink.fills - fills_before;
    const k = kindOf(r, size_only, n);
    kinds[i - f.setup_end] = k;
    rows[k]++;
    fills[k] += n;
  }
  return { kinds, rows, fills };
}

/** classifyFlow of the flow file at `flow_path`, in a worker thread. */
export function classifyFlowInWorker(flow_path: string): Promise<FlowKinds> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./matcher_kinds_worker.js', import.meta.url), { workerData: { flow_path } });
    let done = false;
    worker.once('message', (msg: FlowKinds) => {
      done = true;
      resolve(msg);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (!done) reject(new Error(`kinds worker exited with code ${code} before answering`));
    });
  });
}

function kindOf(r: Request, size_only: boolean, fills: number): number {
  if (r.kind === RequestKind.CANCEL) return K_CANCEL;
  if (r.kind === RequestKind.AMEND) return size_only ? K_AMEND_SIZE : fills > 0 ? K_AMEND_MOVE_CROSS : K_AMEND_MOVE;
  if (r.kind !== RequestKind.PLACE) throw new Error(`a measured row of kind ${r.kind}: not in the bench flow`);
  if (r.order_type === OrderType.MARKET) return r.tif === Tif.FOK ? K_MARKET_FOK : K_MARKET_IOC;
  if (r.tif === Tif.IOC) return K_IOC;
  if (r.tif === Tif.FOK) return K_FOK;
  return fills === 0 ? K_GTC_REST : fills === 1 ? K_GTC_CROSS_1 : K_GTC_CROSS_N;
}

// ------------------------------------------------------------------------------ the JS side

// The sampler: a CommonJS worker reading the row word until told to stop. Each sample records
// the row and the CPU time the replaying (main) thread used since the previous sample (its
// schedstat), so that a sample taken while the replay was descheduled weighs ~0: on a loaded
// machine a preemption of milliseconds would otherwise credit one row's kind with dozens of samples.
const SAMPLER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { openSync, readSync, closeSync } = require('node:fs');
const row = new Int32Array(workerData.row);
const ctl = new Int32Array(workerData.ctl);
const out = new Int32Array(workerData.out);
const out_ns = new Float64Array(workerData.out_ns);
const fd = openSync('/proc/' + process.pid + '/task/' + process.pid + '/schedstat', 'r');
const buf = Buffer.alloc(128);
const cpuNs = () => Number(buf.toString('latin1', 0, readSync(fd, buf, 0, 128, 0)).split(' ')[0]);
let n = 0;
let last = cpuNs();
Atomics.store(ctl, 1, 1);
Atomics.notify(ctl, 1);
while (Atomics.load(ctl, 0) === 0) {
  Atomics.wait(ctl, 0, 0, workerData.period_ms);
  const i = Atomics.load(row, 0);
  const now = cpuNs();
  if (i >= 0 && n < out.length) {
    out[n] = i;
    out_ns[n] = now - last;
    n++;
  }
  last = now;
}
closeSync(fd);
Atomics.store(ctl, 2, n);
`;

const req: Request = emptyRequest();

/** replayFast (bench/matcher.ts) with the row index published for the sampler. */
function replaySampled(e: MatchingEngine, f: Flow, from: number, to: number, out: EventSink, row: Int32Array): void {
  const r = req;
  for (let i = from; i < to; i++) {
    row[0] = i;
    loadRequest(r, f, i);
    e.apply(r, out);
  }
  row[0] = -1;
}

/** On-CPU nanoseconds of the calling thread (the worker's time is not in process.cpuUsage's way here). */
function threadCpuNs(): number {
  return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
}

export interface KindSamples {
  /** Samples per kind, over all sampled replays. */
  samples: number[];
  /** CPU ns of the replaying thread credited to each kind (each sample weighs the CPU time since the previous one). */
  cpu_ns: number[];
  /** Ops per CPU-second of the replaying thread during the sampled replays (median): the sampling's own cost shows here. */
  cpu_ops_per_s: number;
}

/**
 * `repeats` sampled replays of the measured rows, each on a fresh engine from `setUp` (set-up
 * untimed and unsampled), with a GC before each (as the bench's timed runs).
 */
export async function sampleFastKinds(f: Flow, fk: FlowKinds, repeats: number, setUp: () => MatchingEngine,
  gc: () => void): Promise<KindSamples> {
  const samples = new Array<number>(KIND_COUNT).fill(0);
  const cpu_ns = new Array<number>(KIND_COUNT).fill(0);
  const rates: number[] = [];
  for (let rep = 0; rep < repeats; rep++) {
    const engine = setUp();
    const row = new Int32Array(new SharedArrayBuffer(4));
    row[0] = -1;
    const ctl = new Int32Array(new SharedArrayBuffer(12));
    const out = new Int32Array(new SharedArrayBuffer(4 * SAMPLES_MAX));
    const out_ns = new Float64Array(new SharedArrayBuffer(8 * SAMPLES_MAX));
    const worker = new Worker(SAMPLER_SOURCE, {
      eval: true,
      workerData: { row: row.buffer, ctl: ctl.buffer, out: out.buffer, out_ns: out_ns.buffer, period_ms: SAMPLE_PERIOD_MS },
    });
    const exited = new Promise<void>((resolve, reject) => {
      worker.once('exit', () => resolve());
      worker.once('error', reject);
    });
    // Wait (bounded) until the sampler runs, so the replay is sampled from its first row.
    for (let t = 0; t < 500 && Atomics.load(ctl, 1) === 0; t++) await new Promise((res) => setTimeout(res, 10));
    if (Atomics.load(ctl, 1) === 0) throw new Error('the kind sampler did not start');
    const sink = new CountingSink();
    gc();
    const c0 = threadCpuNs();
    replaySampled(engine, f, f.setup_end, f.length, sink, row);
    const c1 = threadCpuNs();
    Atomics.store(ctl, 0, 1);
    Atomics.notify(ctl, 0);
    await exited;
    rates.push((f.length - f.setup_end) / ((c1 - c0) / 1e9));
    const n = Atomics.load(ctl, 2);
    for (let s = 0; s < n; s++) {
      samples[fk.kinds[out[s] - f.setup_end]]++;
      cpu_ns[fk.kinds[out[s] - f.setup_end]] += out_ns[s];
    }
  }
  return { samples, cpu_ns, cpu_ops_per_s: medianUpperMiddle(rates) };
}

// ------------------------------------------------------------------------------ the C side

/** The C reference's samples per kind on the same flow file and kinds (one byte per measured row). */
export function sampleNativeKinds(flow_path: string, kinds_path: string, fk: FlowKinds, repeats: number): KindSamples {
  writeFileSync(kinds_path, fk.kinds);
  const out = execFileSync(nativeTool('matcher_book'), [flow_path, '--repeats', String(repeats), '--sample-kinds', kinds_path], {
    encoding: 'utf8', timeout: 300_000, maxBuffer: 1 << 20,
  });
  const o = JSON.parse(out.trim().split('\n').pop() ?? '') as { kind_samples?: unknown; kind_cpu_ns?: unknown; cpu_ops_per_s?: unknown };
  if (!Array.isArray(o.kind_samples) || !Array.isArray(o.kind_cpu_ns) || typeof o.cpu_ops_per_s !== 'number') {
    throw new Error('native output: no kind_samples');
  }
  const samples = (o.kind_samples as number[]).slice(0, KIND_COUNT);
  const cpu_ns = (o.kind_cpu_ns as number[]).slice(0, KIND_COUNT);
  return { samples, cpu_ns, cpu_ops_per_s: o.cpu_ops_per_s };
}

// ------------------------------------------------------------------------------ the table

export interface KindRow {
  kind: string;
  rows: number;
  fills_per_row: number;
  js_ns: number;
  c_ns: number;
  /** js_ns / c_ns. */
  ratio: number;
  /** This kind's share of the gap (JS time - C time) over the whole flow. */
  gap_share: number;
}

/**
 * Per kind: ns per request in JS and in C, from the samples' shares and the engines' ns per
 * request over the whole flow (`js_ns_per_op`, `c_ns_per_op`: the bench's unsampled medians).
 */
export function kindTable(fk: FlowKinds, js: KindSamples, c: KindSamples, js_ns_per_op: number, c_ns_per_op: number): KindRow[] {
  const total_rows = fk.kinds.length;
  const js_total = js.cpu_ns.reduce((a, b) => a + b, 0);
  const c_total = c.cpu_ns.reduce((a, b) => a + b, 0);
  const rows: KindRow[] = [];
  let gap_total = 0;
  for (let k = 0; k < KIND_COUNT; k++) {
    if (fk.rows[k] === 0) continue;
    const row_share = fk.rows[k] / total_rows;
    const js_ns = (js.cpu_ns[k] / js_total) * js_ns_per_op / row_share;
    const c_ns = (c.cpu_ns[k] / c_total) * c_ns_per_op / row_share;
    rows.push({
      kind: KIND_NAMES[k], rows: fk.rows[k], fills_per_row: fk.fills[k] / fk.rows[k], js_ns, c_ns, ratio: js_ns / c_ns, gap_share: 0,
    });
    gap_total += (js_ns - c_ns) * fk.rows[k];
  }
  for (const r of rows) r.gap_share = ((r.js_ns - r.c_ns) * r.rows) / gap_total;
  return rows;
}
