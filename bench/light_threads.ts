// Which of the server's threads spend its CPU at a light 1,000 requests/s, and how often each wakes
// (issue 11, "other" threads): one server, its funded wallets and pre-signed lanes (the load
// bench's signers and native generator), a warm-up, then `rounds` light phases. Per thread over
// each phase: run time from /proc/<pid>/task/<tid>/schedstat (ns, not the 10 ms ticks of stat),
// wake-ups from voluntary_ctxt_switches, both per answered request; with --gc the GCs per isolate
// per 10,000 requests (--trace-gc-nvp). Threads are keyed by name and creation rank (tids differ
// between runs), and the table prints the medians over the phases. Each round's line also gives
// the threads Node leaves "node" (V8's platform workers: GC helpers and concurrent TurboFan
// compiles; libuv's pool): after a short warm-up that figure falls round by round for ~30 s (the
// JIT still tiering up), so a steady-state figure needs --warmup-phases ~6 (docs/benchmarks.md,
// h23o).
//
//   npx tsc -p tsconfig.json && node dist/bench/light_threads.js [--main F] [--rounds N] [--seconds S]
//     [--warmup-phases N (untimed light phases first, default 1)] [--gc 1] [--config J]
//     [--node-flags=--max-semi-space-size=64 (several: "--node-flags=--a --b")] [--stdout-file F (e.g. with --trace-gc)]
// Ends with ONE JSON line {"bench":"light_threads",...}.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Knobs } from './knobs.js';
import { lightPhaseArgs } from './load/args.js';
import { gcDelta } from './load/gc_trace.js';
import { chooseGenerator } from './load/native_generator.js';
import { depositLanes } from './load/phases.js';
import { onSignalCleanup, removeDir, startServer } from './load/server_child.js';
import { SIGN_BUDGET_MS, Signers } from './load/signers.js';
import { medianMeanOfMiddleTwo } from './quantile.js';
import { sampleThreads, threadRows } from './load/thread_rows.js';

const ADMIN_TOKEN = 'light-threads-admin-token';
const BIG = 1_000_000_000;

async function main(): Promise<void> {
  const knobs = new Knobs();
  const here = path.dirname(fileURLToPath(import.meta.url));
  const main_js = knobs.optionalString('main') ?? path.resolve(here, '../src/main.js');
  const rounds = knobs.number('rounds', 4, 1, 50);
  const seconds = knobs.number('seconds', 5, 1, 60);
  const rate = knobs.number('rate', 1000, 1, 100_000);
  const gc_trace = knobs.number('gc', 0, 0, 1) === 1;
  const flags = (knobs.optionalString('node-flags') ?? '').split(' ').filter((s) => s !== '');
  const extra_text = knobs.optionalString('config');
  const stdout_file = knobs.optionalString('stdout-file') ?? null;
  const warmup_phases = knobs.number('warmup-phases', 1, 0, 100);
  knobs.finish();
  const extra = extra_text === undefined ? {} : (JSON.parse(extra_text) as Record<string, unknown>);
  const wallets = 1000;
  const connections = 64;
  const args = lightPhaseArgs({ wallets, connections, seconds, rate, seed: 'ringbook-light-threads' });
  const gen = chooseGenerator(null);
  const server = await startServer({
    main_js, admin_token: ADMIN_TOKEN, gc_trace, node_flags: flags, stdout_file,
    config: {
      rate_limits: { orders_per_wallet: BIG, cancels_per_wallet: BIG, deposits_per_wallet: BIG, withdrawals_per_wallet: BIG, gets_per_ip: BIG },
      ...extra,
    },
  });
  console.log(`light_threads: server pid ${server.pid} on port ${server.port} (${main_js} ${flags.join(' ')})`);
  const signers = new Signers(args);
  const stop = async (): Promise<void> => {
    await signers.close();
    await server.stop();
  };
  onSignalCleanup(stop);
  const rows = new Map<string, { us: number[]; wakes: number[] }>();
  const gc_rows = new Map<string, { scav: number[]; majors: number[]; bytes: number[]; promoted: number[] }>();
  try {
    const addresses = await signers.ready;
    await gen.runPhase({ port: server.port, lanes: depositLanes(addresses, connections, ADMIN_TOKEN), mode: 'closed', duration_ms: Infinity });
    await signers.ensurePerLane(Math.ceil((rate * seconds * (rounds + warmup_phases)) / connections) + 4, SIGN_BUDGET_MS * 3);
    for (let w = 0; w < warmup_phases; w++) await gen.runPhase({ port: server.port, lanes: signers.lanes, mode: 'open', rate, duration_ms: seconds * 1000 });
    for (let r = 0; r < rounds; r++) {
      const g0 = server.gc?.snapshot() ?? null;
      const a = sampleThreads(server.pid);
      console.log(`  round ${r + 1} from ${Math.round(performance.now())} ms`);
      const res = await gen.runPhase({ port: server.port, lanes: signers.lanes, mode: 'open', rate, duration_ms: seconds * 1000 });
      const b = sampleThreads(server.pid);
      const n = Math.max(1, res.in_window.responses);
      for (const t of threadRows(server.pid, a, b, n)) {
        const row = rows.get(t.key) ?? { us: [], wakes: [] };
        row.us.push(t.us_per_request);
        row.wakes.push(t.wakes_per_request);
        rows.set(t.key, row);
      }
      if (g0 !== null && server.gc !== null) {
        for (const [iso, d] of gcDelta(g0, server.gc.snapshot())) {
          const row = gc_rows.get(iso) ?? { scav: [], majors: [], bytes: [], promoted: [] };
          row.scav.push((d.scavenges * 10_000) / n);
          row.majors.push((d.majors * 10_000) / n);
          row.bytes.push(d.allocated / n);
          row.promoted.push(d.promoted / n);
          gc_rows.set(iso, row);
        }
      }
      const total = [...b.entries()].reduce((s, [tid, t]) => s + t.run_ns - (a.get(tid)?.run_ns ?? 0), 0) / 1000 / n;
      // The threads Node leaves unnamed ("node", the main thread aside): V8's platform workers
      // (GC helpers, concurrent compilation), libuv's pool, the unnamed workers.
      const unnamed = [...b.entries()].reduce((s, [tid, t]) => s + (tid !== server.pid && t.comm === 'node' ? t.run_ns - (a.get(tid)?.run_ns ?? 0) : 0), 0) / 1000 / n;
      console.log(`  round ${r + 1}: ${n} answered, server ${total.toFixed(1)} us CPU/request, unnamed threads ${unnamed.toFixed(1)}`);
    }
    const med = (xs: number[]): number => Math.round(medianMeanOfMiddleTwo(xs) * 100) / 100;
    const table = [...rows.entries()].map(([key, v]) => ({ key, us: med(v.us), wakes: med(v.wakes) })).sort((x, y) => y.us - x.us);
    for (const t of table) if (t.us >= 0.05 || t.wakes >= 0.005) console.log(`  ${t.key.padEnd(24)} ${t.us.toFixed(2).padStart(8)} us/req ${t.wakes.toFixed(3).padStart(7)} wakes/req`);
    const gc = Object.fromEntries([...gc_rows.entries()].map(([iso, v]) => [iso, { scavenges_per_10k: med(v.scav), majors_per_10k: med(v.majors), bytes_per_request: Math.round(med(v.bytes)), promoted_per_request: Math.round(med(v.promoted)) }]));
    for (const [iso, g] of Object.entries(gc)) console.log(`  gc ${iso}: ${g.scavenges_per_10k} scavenges/10k, ${g.majors_per_10k} majors/10k, ${g.bytes_per_request} B/request allocated, ${g.promoted_per_request} B/request promoted`);
    const sum = table.reduce((s, t) => s + t.us, 0);
    console.log(JSON.stringify({ bench: 'light_threads', main_js, node_flags: flags, config: extra, warmup_phases, rounds, seconds, rate, server_us_per_request: Math.round(sum * 10) / 10, threads: table, gc }));
  } finally {
    await stop().catch(() => undefined);
    removeDir(server.dir);
  }
}

main().catch((e: unknown) => {
  console.error('light_threads: failed:', e instanceof Error ? e.stack : e);
  process.exit(1);
});
