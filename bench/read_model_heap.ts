// What the front's read model and market data keep per request, in V8 heap bytes and in
// ArrayBuffer bytes outside it: the engine's generated flow (test/engine/generator.ts) through the
// replay executor, once with the engine alone and once with the read model and market data fed
// by its events, with the server's default limits (after a shorter warm-up pass of both, so the
// compiled code falls in neither); each pass's heap after full GCs, less its start. What is kept is what the front's scavenges promote (issue 11, branch h11m); unlike the
// load bench's `--gc` counts it does not depend on the machine's load or the requests in flight.
//
// Run: npx tsc -p tsconfig.json && node --expose-gc dist/bench/read_model_heap.js
//   --requests N   generated requests (default 30,000)
//   --seed N       generator seed (default 7)
//   --dist DIR     another build's dist/ to measure instead (an A/B: e.g. /work/main/dist)
// Ends with one JSON line.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { Knobs } from './knobs.js';
import type { ReadModel as ReadModelType } from '../src/read_model/read_model.js';

interface Pass {
  heap_bytes: number;
  external_bytes: number;
  orders: number;
  fills: number;
  trades: number;
}

function gcAll(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  gc();
  gc();
}

function heapNow(): { heap: number; external: number } {
  gcAll();
  const m = process.memoryUsage();
  return { heap: v8.getHeapStatistics().used_heap_size, external: m.external };
}

async function main(): Promise<void> {
  const knobs = new Knobs();
  const n = knobs.number('requests', 30_000, 100, 1_000_000);
  const seed = knobs.number('seed', 7, 1, 1_000_000);
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dist = path.resolve(knobs.optionalString('dist') ?? path.resolve(here, '..'));
  knobs.finish();
  const { ReplayExecutor } = await import(path.join(dist, 'src/da/replay.js'));
  const { ReadModel } = await import(path.join(dist, 'src/read_model/read_model.js'));
  const { MarketData } = await import(path.join(dist, 'src/marketdata/market_data.js'));
  const { LIMIT_DEFAULTS } = await import(path.join(dist, 'src/config/sections.js'));
  const { generateSequence } = await import(path.join(dist, 'test/engine/generator.js'));
  const { recordsOf, recordable } = await import(path.join(dist, 'test/da/records.js'));
  const limits = {
    fills_per_account_kept: LIMIT_DEFAULTS.fills_per_account_kept as number,
    trades_per_market_kept: LIMIT_DEFAULTS.trades_per_market_kept as number,
    closed_orders_kept: LIMIT_DEFAULTS.closed_orders_kept as number,
  };
  const g = generateSequence(seed, n);
  const requests = g.requests.filter(recordable);

  const pass = (with_model: boolean, count = requests.length): Pass => {
    const rm: ReadModelType = new ReadModel(g.config.assets, limits);
    const md = new MarketData(rm, { now: () => 0 });
    rm.observe([md]);
    const ex = new ReplayExecutor(g.config, { state_root: false, onEvent: with_model ? (e: unknown) => rm.apply(e as never) : () => {} });
    ex.genesis();
    const h0 = heapNow();
    let batch = 0;
    for (let at = 0; at < count; at += 7) {
      const part = requests.slice(at, Math.min(at + 7, count));
      ex.apply(++batch, 1_795_000_000_000 + 60_000 * batch, recordsOf(part), part.length);
    }
    const h1 = heapNow();
    let fills = 0;
    for (const l of rm.fills_by_account.values()) fills += l.length;
    let trades = 0;
    for (const l of rm.trades_by_market) if (l) trades += l.length;
    return { heap_bytes: h1.heap - h0.heap, external_bytes: h1.external - h0.external, orders: rm.orders.size, fills, trades };
  };

  // A warm-up with both, so that neither measured pass holds the compiled code of the other's first run.
  pass(true, Math.min(requests.length, 5000));
  const engine = pass(false);
  const both = pass(true);
  const per = (x: number): number => Math.round(x / requests.length);
  const model_heap = per(both.heap_bytes - engine.heap_bytes);
  const model_external = per(both.external_bytes - engine.external_bytes);
  console.log(`read_model_heap: ${dist}, ${requests.length} generated requests (seed ${seed}), limits ${JSON.stringify(limits)}`);
  console.log(`  held after the flow: ${both.orders} orders, ${both.fills} fills in account lists, ${both.trades} trades in market lists`);
  console.log(`  kept per request: read model + market data ${model_heap} B of V8 heap, ${model_external} B outside it (ArrayBuffers); the engine alone ${per(engine.heap_bytes)} B`);
  console.log(JSON.stringify({
    bench: 'read_model_heap', dist, requests: requests.length, seed, orders_held: both.orders, fills_held: both.fills, trades_held: both.trades,
    model_heap_bytes_per_request: model_heap, model_external_bytes_per_request: model_external, engine_heap_bytes_per_request: per(engine.heap_bytes),
  }));
}

await main();
