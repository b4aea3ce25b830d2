// Bytes and CPU the front spends per signed answer between the read model's calls and the answer's
// bytes (issue 11, branch h16f): PendingAnswers (src/gateway/outcomes.ts) collects each request's
// outcome from the observer calls of a committed batch, releases the batch at its commit, and each
// callback writes the accepted-order answer (views.ts orderAnswerBody), as the signed path does.
// The flow is a max-rate batch: 64 requests, 54 places (half with a taker fill) and 10 cancels whose
// orders were created in earlier batches (their answers carry an older created_at). No server, no
// socket, no read model: the orders are made once, so only the answer path is counted.
//
// Bytes: the growth of V8's new space over `--batches` batches with the young generation set
// large enough that no scavenge runs inside a round (median of 5 rounds, per request), each build in
// its own child process. CPU: `process.cpuUsage` over 5 rounds per build, the builds imported into
// one process and alternated round by round (median ns per request). Neither depends on the
// machine's load the way the load bench's figures do (CPU less so: a shared core still slows it).
//
// Run: npx tsc -p tsconfig.json && node dist/bench/answer_bytes.js [--dist DIR[,DIR]] [--batches N]
//   --dist     builds' dist/ folders, comma separated (default: this build); e.g. /work/wt/start/dist,dist
//   --batches  batches per round (default 300; 64 requests each)
// Ends with one JSON line.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Knobs } from './knobs.js';
import { BYTE_COUNT_FLAGS, gc, newSpaceUsed, runWithByteCountFlags } from './byte_count_flags.js';
import { medianUpperMiddle } from './quantile.js';

const REQUESTS_PER_BATCH = 64;
const CANCELS_PER_BATCH = 10; // ~15%: the load bench's cancel_share (bench/load/flow.ts)

interface Outcome { accepted: boolean; order_id: number; fills: readonly unknown[]; batch_id: number }
interface Observer {
  batchBegin(batch_id: number, time_ms: number): void;
  accepted(seq: number, kind: number, account: number, order_id: number): void;
  fill(seq: number, t: unknown, taker_filled: number, maker_filled: number): void;
  orderUpdate(seq: number, o: unknown, reason: number): void;
  batchCommitted(batch_id: number, time_ms: number, changed: ReadonlySet<number>, stages: unknown): void;
}
interface Pending {
  observer: Observer;
  add(seq: number, done: (o: Outcome) => void, stamps: null, written_ms: number, reused?: boolean): void;
  release(batch_id: number, time_ms: number, stages: unknown): number;
}
interface Build {
  dist: string;
  PendingAnswers: new (failed: (e: unknown) => void, committed: () => void) => Pending;
  orderAnswerBody: (rm: unknown, o: unknown, fills: readonly unknown[] | null, batch_id: number) => Uint8Array;
}

async function load(dist: string): Promise<Build> {
  const outcomes = await import(pathToFileURL(path.join(dist, 'src/gateway/outcomes.js')).href) as { PendingAnswers: Build['PendingAnswers'] };
  const views = await import(pathToFileURL(path.join(dist, 'src/gateway/views.js')).href) as { orderAnswerBody: Build['orderAnswerBody'] };
  return { dist, PendingAnswers: outcomes.PendingAnswers, orderAnswerBody: views.orderAnswerBody };
}

const T0_MS = 1_764_000_000_000;
const rm = { markets: [{ id: 'ETH-USDC' }] };

/** The orders answered (made once): places, and cancels of orders created in earlier batches. */
function makeOrders(batches: number): { places: object[]; cancels: object[] } {
  const places: object[] = [];
  const cancels: object[] = [];
  for (let i = 0; i < (REQUESTS_PER_BATCH - CANCELS_PER_BATCH) * batches; i++) {
    places.push({
      order_id: 1_000_000 + i, account: 1 + (i % 4000), market: 0, side: i % 2, order_type: 0, tif: 0, price: 2_000_000_000 + i * 10_000,
      quantity: 1_000_000, filled: i % 2 === 0 ? 0 : 1_000_000, remaining: i % 2 === 0 ? 1_000_000 : 0, status: i % 2 === 0 ? 0 : 2,
      client_order_id: `c${i}`, last_fill_price: 0, created_ms: 0, updated_ms: 0, resting_price: 0, resting_quantity: 0,
    });
  }
  for (let i = 0; i < CANCELS_PER_BATCH * batches; i++) {
    cancels.push({
      order_id: 500_000 + i, account: 1 + (i % 4000), market: 0, side: i % 2, order_type: 0, tif: 0, price: 1_900_000_000,
      quantity: 1_000_000, filled: 0, remaining: 0, status: 3, client_order_id: '', last_fill_price: 0,
      created_ms: T0_MS - 1_000_000 + i * 37, updated_ms: 0, resting_price: 0, resting_quantity: 0,
    });
  }
  return { places, cancels };
}

/** One round: `batches` batches through PendingAnswers and the answer writer; returns the answers' total bytes (a check). */
function runner(b: Build, batches: number): () => number {
  const { places, cancels } = makeOrders(batches);
  const answers = new b.PendingAnswers((e) => {
    throw e;
  }, () => {});
  const stages = { started_ms: 0, applied_ms: 0, durable_ms: 0 };
  const changed = new Set<number>();
  let seq = 0;
  let bytes = 0;
  const orders = new Map<number, Record<string, number | string>>();
  for (const o of [...places, ...cancels] as Record<string, number | string>[]) orders.set(o.order_id as number, o);
  const done = (o: Outcome): void => {
    bytes += b.orderAnswerBody(rm, orders.get(o.order_id), o.fills, o.batch_id).length;
  };
  const trade = { fill_id: 0, market: 0, taker_order_id: 0, maker_order_id: 1, taker_account: 2, maker_account: 3, taker_side: 0,
    price: 2_000_000_000, quantity: 1_000_000, taker_fee: 2_000, maker_fee: 0, time_ms: 0, batch_id: 0 };
  return () => {
    bytes = 0;
    let p = 0;
    let c = 0;
    for (let batch = 1; batch <= batches; batch++) {
      const time_ms = T0_MS + batch;
      const first = seq + 1;
      for (let k = 0; k < REQUESTS_PER_BATCH; k++) answers.add(++seq, done, null, 0, true);
      answers.observer.batchBegin(batch, time_ms);
      for (let k = 0; k < REQUESTS_PER_BATCH; k++) {
        const s = first + k;
        const o = (k < CANCELS_PER_BATCH ? cancels[c++] : places[p++]) as Record<string, number | string>;
        o.updated_ms = time_ms;
        if (k >= CANCELS_PER_BATCH) o.created_ms = time_ms;
        answers.observer.accepted(s, k < CANCELS_PER_BATCH ? 2 : 1, o.account as number, o.order_id as number);
        if (k >= CANCELS_PER_BATCH && k % 2 === 1) {
          trade.fill_id = 900_000 + batch * REQUESTS_PER_BATCH + k; // the same digits every round (the check below)
          trade.taker_order_id = o.order_id as number;
          answers.observer.fill(s, trade, 1_000_000, 1_000_000);
        }
        answers.observer.orderUpdate(s, o, 0);
      }
      answers.observer.batchCommitted(batch, time_ms, changed, stages);
      answers.release(batch, time_ms, stages);
    }
    return bytes;
  };
}

async function bytesOf(dist: string, batches: number): Promise<number> {
  const run = runner(await load(dist), batches);
  const round = (): number => {
    gc();
    const before = newSpaceUsed();
    run();
    const grown = newSpaceUsed() - before;
    if (grown <= 0) throw new Error('new space shrank inside a round: a scavenge ran');
    return grown / (batches * REQUESTS_PER_BATCH);
  };
  for (let w = 0; w < 5; w++) round();
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) rounds.push(round());
  return medianUpperMiddle(rounds);
}

async function main(): Promise<void> {
  const knobs = new Knobs();
  const batches = knobs.number('batches', 300, 10, 2000);
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dists = (knobs.optionalString('dist') ?? path.resolve(here, '..')).split(',').map((d) => path.resolve(d));
  const bytes_only = knobs.optionalString('bytes-only');
  knobs.finish();
  if (bytes_only !== undefined) {
    // A child: one build's bytes (its own process: one build's code in the heap).
    console.log(JSON.stringify({ bytes_per_request: await bytesOf(dists[0], batches) }));
    return;
  }
  const bytes: number[] = [];
  for (const d of dists) {
    const run = spawnSync(process.execPath, [...BYTE_COUNT_FLAGS, fileURLToPath(import.meta.url), '--dist', d, '--batches', String(batches), '--bytes-only', '1'], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`answer_bytes child for ${d} failed: ${run.stderr}`);
    bytes.push((JSON.parse(run.stdout.trim().split('\n').pop() as string) as { bytes_per_request: number }).bytes_per_request);
  }
  // CPU: every build in this process, rounds alternated (A B A B ...).
  const runs = await Promise.all(dists.map(async (d) => runner(await load(d), batches)));
  const cpu: number[][] = dists.map(() => []);
  const checks = new Set<number>();
  for (let w = 0; w < 3; w++) for (const r of runs) checks.add(r());
  for (let round = 0; round < 7; round++) {
    for (let i = 0; i < runs.length; i++) {
      const t = process.cpuUsage();
      checks.add(runs[i]());
      const u = process.cpuUsage(t);
      cpu[i].push(((u.user + u.system) * 1000) / (batches * REQUESTS_PER_BATCH));
    }
  }
  // Every build wrote the same number of answer bytes (the answers' bytes themselves: test/gateway/views.test.ts).
  if (checks.size !== 1) throw new Error(`the builds wrote different answer bytes: ${[...checks].join(', ')}`);
  const results = dists.map((d, i) => ({ dist: d, bytes_per_request: Math.round(bytes[i]), cpu_ns_per_request: Math.round(medianUpperMiddle(cpu[i])),
    cpu_ns_rounds: cpu[i].map((x) => Math.round(x)) }));
  for (const r of results) {
    console.log(`answer_bytes: ${r.dist}: ${r.bytes_per_request} B and ${r.cpu_ns_per_request} ns CPU per answered request ` +
      `(CPU rounds ${r.cpu_ns_rounds.join(' / ')})`);
  }
  console.log(JSON.stringify({ bench: 'answer_bytes', batches, requests_per_batch: REQUESTS_PER_BATCH, cancels_per_batch: CANCELS_PER_BATCH, builds: results }));
}

await runWithByteCountFlags(import.meta.url, main);
