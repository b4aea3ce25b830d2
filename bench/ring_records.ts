// The ring's record codecs on one thread, for instruction counts (branch h16c): per op the front
// writes one PLACE record (RequestWriter.tryWrite + flush), the matcher side reads it
// (RequestReader.read into a reused Request) and releases it, EventWriter writes ACCEPTED, FILL,
// two ORDER_UPDATEs, two BALANCEs and a BATCH_COMMIT and flushes, and the front reads each event
// through an EventCursor and copies it into a RecordBuffer (as the event pump keeps a batch), then
// releases. No second thread, no waits: what is counted is the codecs and the ring's positions.
//
// Instructions per op, load-independent: run it under callgrind at two round counts and divide the
// difference by the ops between them (docs/benchmarks.md, h16c):
//   valgrind --tool=callgrind node --single-threaded dist/bench/ring_records.js --rounds 1
//   valgrind --tool=callgrind node --single-threaded dist/bench/ring_records.js --rounds 4
// Run: npx tsc -p tsconfig.json && node dist/bench/ring_records.js [--rounds N] [--dist DIR] [--copy 0|1]
//   --rounds  rounds of 20,000 ops (default 10); the CPU figure is the median round's
//   --dist    another build's dist/ to measure (an A/B: e.g. /work/wt/start/dist)
//   --copy    0: skip the RecordBuffer copy
// Ends with one JSON line.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Knobs } from './knobs.js';
import { medianUpperMiddle } from './quantile.js';

const OPS_PER_ROUND = 20_000;
const PLACE = 3; // RequestKind.PLACE (a const enum: not in the emitted module)

interface Ring { available(): number; slotOffset(i: number): number; release(n: number): void }
interface Views { i32: Int32Array; f64: Float64Array; u8: Uint8Array }

async function main(): Promise<void> {
  const knobs = new Knobs();
  const rounds = knobs.number('rounds', 10, 1, 1000);
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dist = path.resolve(knobs.optionalString('dist') ?? path.resolve(here, '..'));
  const copy = knobs.number('copy', 1, 0, 1) === 1;
  knobs.finish();
  const load = (p: string): Promise<Record<string, unknown>> => import(pathToFileURL(path.join(dist, p)).href) as Promise<Record<string, unknown>>;
  const types = await load('src/engine/types.js');
  const records = await load('src/ring/records.js');
  const requests = await load('src/ring/request_records.js');
  const events = await load('src/ring/event_records.js');
  const writer = await load('src/ring/event_writer.js');
  const createRecordRing = records.createRecordRing as (slots: number) => Ring;
  const viewsOfRing = records.viewsOfRing as (ring: Ring) => Views;
  const RecordBuffer = records.RecordBuffer as new (n: number) => { push(from: Views, o: number): number; clear(): void };
  const RequestWriter = requests.RequestWriter as new (ring: Ring) => { tryWrite(seq: number, a: Uint8Array, hint: number, r: object): boolean; flush(): void };
  const RequestReader = requests.RequestReader as new (v: Views) => { read(o: number, r: object): number };
  const EventReader = events.EventReader as new (v: Views) => object;
  const EventCursor = events.EventCursor as new (r: object) => { o: number; type(): number; seq(): number; field(k: number): number };
  const EventWriter = writer.EventWriter as new (ring: Ring) => {
    seq: number; current: object | null; flush(): void;
    accepted(kind: number, account: number, order_id: number): void;
    fill(...a: number[]): void; orderUpdate(...a: number[]): void;
    balance(account: number, asset: number, available: number, locked: number, reason: number): void;
    batchCommitted(batch_id: number, time_ms: number, request_count: number): void;
  };
  const emptyRequest = types.emptyRequest as () => object;

  const rq = createRecordRing(1024);
  const ev = createRecordRing(1024);
  const rw = new RequestWriter(rq);
  const rr = new RequestReader(viewsOfRing(rq));
  const ew = new EventWriter(ev);
  const cursor = new EventCursor(new EventReader(viewsOfRing(ev)));
  const ev_views = viewsOfRing(ev);
  const buf = new RecordBuffer(64);
  const address = new Uint8Array(20).fill(7);
  const r = Object.assign(emptyRequest(), { kind: PLACE, nonce: 9, market: 1, side: 1, order_type: 0, tif: 2, price_units: 2_000_000, quantity_units: 300 });
  const back = emptyRequest();
  let seq = 0;
  let check = 0;
  const op = (): void => {
    seq++;
    if (!rw.tryWrite(seq, address, 3, r)) throw new Error('request ring full');
    rw.flush();
    let n = rq.available();
    for (let i = 0; i < n; i++) check += rr.read(rq.slotOffset(i), back);
    rq.release(n);
    ew.seq = seq;
    ew.current = back;
    ew.accepted(1, 3, seq);
    ew.fill(seq, 1, seq, seq - 1, 3, 4, 1, 2_000_000, 100, 1, 1);
    ew.orderUpdate(seq, 3, 1, 1, 1, 2_000_000, 300, 100, 200, 2_000_000, 0, 400_000_000, seq);
    ew.orderUpdate(seq - 1, 4, 1, 0, 2, 2_000_000, 100, 100, 0, 2_000_000, 0, 0, seq - 1);
    ew.balance(3, 0, 1000, 400, 0);
    ew.balance(4, 1, 1000, 0, 0);
    ew.batchCommitted(seq, 1, 1);
    ew.flush();
    n = ev.available();
    buf.clear();
    for (let i = 0; i < n; i++) {
      const o = ev.slotOffset(i);
      cursor.o = o;
      check += cursor.type() + cursor.seq() + cursor.field(0) + cursor.field(3);
      if (copy) buf.push(ev_views, o);
    }
    ev.release(n);
  };
  const ns: number[] = [];
  for (let k = 0; k < rounds; k++) {
    const before = process.cpuUsage();
    for (let i = 0; i < OPS_PER_ROUND; i++) op();
    const used = process.cpuUsage(before);
    ns.push(((used.user + used.system) * 1000) / OPS_PER_ROUND);
  }
  // Every op's records came back: 7 events per op, and the reader's and cursor's sums are positive.
  if (seq !== rounds * OPS_PER_ROUND || !(check > 0)) throw new Error('ring_records: records lost');
  const cpu_ns_per_op = Math.round(medianUpperMiddle(ns));
  console.log(`ring_records: ${dist}, ${seq} ops (${rounds} rounds): ${cpu_ns_per_op} ns CPU per op (median round)`);
  console.log(JSON.stringify({ bench: 'ring_records', dist, ops: seq, copy, cpu_ns_per_op }));
}

await main();
