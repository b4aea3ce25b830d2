// End-to-end load benchmark: the real server as a child process, thousands of funded wallets,
// pre-signed orders and cancels written over raw keep-alive connections.
//
// Run: npx tsc -p tsconfig.json && node dist/bench/load.js [options]
//   --wallets N        distinct funded wallets (default 4000)
//   --connections N    concurrent connections = lanes, one request in flight each (default 256)
//   --seconds S        length of each timed phase (default 10)
//   --runs N           max-throughput repetitions, the median is quoted (default 3)
//   --rate R           fixed-rate phase, signed requests per second (default 5000)
//   --signers N        signing worker threads before timing (default: cores)
//   --warmup S         untimed closed-loop warm-up before the first run (default 1.5)
//   --seed TEXT        wallet keys are sha256(seed:index) (default ringbook-load-1)
//   --profile          run the server with --cpu-prof and print its hot spots per thread
//   --perf-stat        count the front thread's kernel events (perf stat -t: syscalls by kind, switches,
//                      wake-ups it issues) in each max run and the half-max phase, per request
//   --gc               run the server with --trace-gc-nvp: the front's bytes allocated, scavenges and
//                      GC pauses per request at max rate and at 1,000/s (bench/load/gc_trace.ts), and
//                      every isolate's pauses laid over the stall episodes (bench/load/stalls.ts)
//   --generator G      native (native-bench/build/loadgen, the default when built) or node
//   --generator-io IO  the native generator's socket I/O: auto (its default: io_uring at max rate when
//                      the kernel allows it, epoll at fixed rates), io_uring or epoll; the JSON's
//                      generator_io says which ran in the median max-rate run
//   --generator-spin-us N  the native generator's early wake in its fixed-rate phases (loadgen --spin-us:
//                      its timer fires N us before a due send and it spins to it, so its own wake-up
//                      lateness is not charged to latency; 0: none; absent: the binary's default); the
//                      JSON's generator_spin_us_at_1000 says which ran (null: a binary without it)
//   --loadgen FILE     the native generator's binary (default native-bench/build/loadgen): an A/B of two
//                      generators against one server build (e.g. /work/wt/start/native-bench/build/loadgen)
//   --transport T      http (default) or ws: the native generator sends the timed phases' signed
//                      requests as WebSocket order entry (`post` frames on /ws carrying the same signed
//                      bodies, one in flight per connection as over HTTP: bench/load/ws_frames.ts,
//                      native-bench/loadgen_ws.h); funding stays on HTTP; the JSON adds "transport":"ws"
//   --ws-lanes-per-connection K  with ws: K lanes share one WebSocket (--connections / K sockets, up to
//                      K posts in flight each, each lane still one; native-bench/loadgen_ws_lanes.h);
//                      default 1; the JSON adds "ws_lanes_per_connection"
//   --matcher-cpu N    run the server with matcher.cpu N (pin the matcher thread; default off)
//   --pipeline-cpu N   run the server with threads.pipeline_cpu N (the front and the matcher on CPU N,
//                      the other threads on the other CPUs; default off: docs/operations.md "Thread placement")
//   --background P     run the server with threads.background P, "nice,policy" (e.g. "10,batch";
//                      "0,other": the default priority; absent: the server's default)
//   --verify-steal-after-us N  run the server with verify.steal_after_us N (0: the front never checks
//                      a waiting verify task itself; absent: the server's default)
//   --verify-task-items N  run the server with verify.task_items_max N (absent: the server's default)
//   --verify-inline-items N  run the server with verify.inline_items_max N (0: every check goes to a
//                      verify worker; absent: the server's default)
//   --verify-inline-busy-max-pct N  run the server with verify.inline_busy_max_pct N (0: inline checks
//                      at light load only; absent: the server's default)
//   --metrics-pairs N  metrics on/off comparison: N pairs of closed-loop runs (default 2; 0: skip)
//   --metrics-seconds S  length of each of those runs (default 5)
//   --server-flags=F   extra node flags for the server, space-separated (e.g. --server-flags="--trace-gc":
//                      a value that starts with -- takes the = form; BENCH_SERVER_FLAGS works too)
//   --server-log FILE  copy the server's stdout to FILE (with --trace-gc: every GC pause, timed)
//   --server-main F    run this compiled server instead of this build's dist/src/main.js (an A/B
//                      of two builds with one measuring client: e.g. /work/main/dist/src/main.js);
//                      the verify stage and signature ceiling are still this build's recoverer,
//                      and that server may recover with another library (the JSON says so)
// Phases: start server -> fund wallets (POST /deposit, admin token) -> measure the verify stage
// -> pre-sign -> warm-up -> max throughput (closed loop) x runs -> fixed rate (open loop)
// -> metrics on/off (closed loop, A B B A: bench/load/metrics_cost.ts) -> 1,000 requests/s (open
// loop) -> half the max rate (open loop). The server runs with metrics on (the default) and
// diagnostics.stage_timings on, and the 1,000/s phase's latency per stage is read from its rows.
// Signing happens only between timed phases (in worker threads, sized from the measured rates);
// the timed phases only write pre-built bytes (bench/load/lanes.ts explains the client: one
// request in flight per connection because the server's uWS drops pipelined async requests).
// Server CPU comes from /proc/<pid>/task/*/stat; through the two latency phases every server
// thread's schedstat is also sampled every 5 ms, and their slow answers are clustered into stall
// episodes laid over GC pauses, journal commits and those samples (bench/load/stalls.ts).
// Ends with one JSON line. Bounded: ~1-2 minutes.
// Results and what limits them: docs/benchmarks.md, section "load". This file runs the phases in
// order; their parts live in bench/load/ (args, signers, verify_stage, phases, phase_cpu, report).
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { parseArgs } from './load/args.js';
import { daLag } from './load/da_lag.js';
import { loadNativeSecp256k1, walletKey } from './load/flow.js';
import { costOrder, metricsPortOf, setRecording, type CostRun } from './load/metrics_cost.js';
import { chooseGenerator, LOADGEN_BINARY } from './load/native_generator.js';
import { measured } from './load/phase_cpu.js';
import { FRONT_EVENTS, startPerfStat } from './load/perf_stat.js';
import { depositLanes, latencyPhases } from './load/phases.js';
import { report, type MaxRun } from './load/report.js';
import { onSignalCleanup, removeDir, startServer } from './load/server_child.js';
import { SIGN_BUDGET_MS, Signers } from './load/signers.js';
import { epochNowMs } from './load/targets.js';
import { f1, int, machineLoad, mapText, mergeRejects, saneOrThrow } from './load/text.js';
import { medianMeanOfMiddleTwo } from './quantile.js';
import { measureVerifyStage, recoverLibraryText } from './load/verify_stage.js';

async function main(): Promise<void> {
  const args = parseArgs();
  const here = path.dirname(fileURLToPath(import.meta.url));
  const repo_root = path.resolve(here, '../..');
  const main_js = args.server_main === null ? path.resolve(here, '../src/main.js') : path.resolve(args.server_main);
  if (!existsSync(main_js)) throw new Error(`${main_js} not found: compile first (npx tsc -p tsconfig.json)`);
  const t_start = performance.now();
  const cpu_model = os.cpus()[0]?.model ?? 'unknown';
  const say = (line = ''): void => console.log(line);
  say(`ringbook load bench: ${new Date().toISOString().slice(0, 10)}, node ${process.version}, ${os.availableParallelism()} cores (${cpu_model}), ${machineLoad()}`);

  const secp = loadNativeSecp256k1();
  const gen = chooseGenerator(args.generator, args.loadgen === null ? LOADGEN_BINARY : path.resolve(args.loadgen), args.generator_io, args.generator_spin_us, args.transport, args.ws_lanes_per_connection);
  say(`generator: ${gen.note}`);
  const profile_dir = args.profile ? mkdtempSync(path.join(os.tmpdir(), 'ringbook-load-prof-')) : null;
  const big = 1_000_000_000;
  const server = await startServer({
    main_js,
    admin_token: 'load-bench-admin-token',
    config: {
      rate_limits: { orders_per_wallet: big, cancels_per_wallet: big, deposits_per_wallet: big, withdrawals_per_wallet: big, gets_per_ip: big },
      diagnostics: { stage_timings: true },
      // Over ws each lane is one WebSocket connection, which the server caps per IP.
      ...(args.transport === 'ws' ? { limits: { ws_connections_per_ip_max: Math.max(256, args.connections) } } : {}),
      matcher: { cpu: args.matcher_cpu },
      ...(args.background === null && args.pipeline_cpu === null ? {} : { threads: {
        ...(args.background === null ? {} : { background: args.background }),
        ...(args.pipeline_cpu === null ? {} : { pipeline_cpu: args.pipeline_cpu }),
      } }),
      verify: {
        ...(args.verify_steal_after_us === null ? {} : { steal_after_us: args.verify_steal_after_us }),
        ...(args.verify_task_items === null ? {} : { task_items_max: args.verify_task_items }),
        ...(args.verify_inline_items === null ? {} : { inline_items_max: args.verify_inline_items }),
        ...(args.verify_inline_busy_max_pct === null ? {} : { inline_busy_max_pct: args.verify_inline_busy_max_pct }),
      },
      // On (as by default) on a free port: the on/off comparison flips its recording.
      metrics: { enabled: true, port: 0 },
    },
    node_flags: [...(profile_dir ? ['--cpu-prof', `--cpu-prof-dir=${profile_dir}`] : []), ...args.server_flags],
    stdout_file: args.server_log,
    gc_trace: args.gc,
  });
  let signers: Signers | null = null;
  try {
    say(`server: pid ${server.pid}, port ${server.port}, data dir ${server.dir}${profile_dir ? `, profiling to ${profile_dir}` : ''}`);
    const server_died = server.exited.then((code) => {
      throw new Error(`server exited during the bench (code ${code}): ${server.stderr.slice(-5).join(' | ')}`);
    });
    server_died.catch(() => undefined);
    const guard = <T>(p: Promise<T>): Promise<T> => Promise.race([p, server_died]);

    // Wallets: the signer workers derive the keys of the lanes they own and report the addresses.
    let t = performance.now();
    signers = new Signers(args);
    const signers_now = signers;
    onSignalCleanup(() => signers_now.close());
    const addresses = await guard(signers.ready);
    const keys_ms = performance.now() - t;

    // Funding: 2 deposits per wallet, concurrently over the same number of connections.
    const fund = await guard(measured(server, () => gen.runPhase({ port: server.port, lanes: depositLanes(addresses, args.connections, server.admin_token), mode: 'closed', duration_ms: Infinity, transport: 'http' })));
    const dep = fund.value.stats.deposit;
    say(`setup: ${int(args.wallets)} wallets (keys ${f1(keys_ms)} ms), ${int(dep.ok)}/${int(dep.sent)} deposits OK in ${f1(fund.value.window_ms / 1000)} s (${int((dep.ok * 1000) / fund.value.window_ms)}/s)` +
      (dep.rejected() > 0 ? `, rejected: ${mapText(dep.rejects)}` : ''));
    if (dep.ok !== args.wallets * 2) throw new Error(`funding failed: ${dep.ok} of ${args.wallets * 2} deposits accepted (${mapText(dep.rejects)})`);

    // Verify stage, measured here on one thread while the server is idle.
    const vs = measureVerifyStage(secp, Array.from({ length: 64 }, (_, i) => walletKey(secp, `${args.seed}-verify`, i)), 1200);
    const verify_threads = Math.max(1, os.availableParallelism() - 1);
    say(`verify stage (this process, 1 thread, ${recoverLibraryText(vs.recover_library)}` +
      `${args.server_main === null ? '' : ': this build\'s recoverer, the --server-main server may recover with another library'}, per CPU-second): EIP-191 hash + recover + address ${int(vs.full_per_cpu_s)}/s ` +
      `(${f1(1e6 / vs.full_per_cpu_s)} us CPU each; bare recovery ${int(vs.recover_per_cpu_s)}/s; ecdsaSign ${int(vs.sign_per_cpu_s)}/s); ` +
      `per wall second as it ran: ${int(vs.full_per_wall_s)}/s`);
    say(`  server verify pool: ${verify_threads} thread(s) (cores - 1) -> signature ceiling ~${int(vs.full_per_cpu_s * verify_threads)} signed requests/s if those threads had whole cores`);

    // Pre-sign for the warm-up and the first run. The server cannot verify faster than its pool
    // threads recover, so that (with margin) bounds what one run can take. Each top-up is capped
    // at ~10 s of signing (SIGN_BUDGET_MS); a run whose pool runs out is shortened and says so.
    const C = args.connections;
    let est_rate = Math.max(2000, vs.full_per_cpu_s * verify_threads * 1.3);
    const perLane = (total: number): number => Math.ceil((total / C) * 1.25) + 2;
    t = performance.now();
    await guard(signers.ensurePerLane(perLane(est_rate * (args.seconds + args.warmup_s)), SIGN_BUDGET_MS * 1.5));
    say(`pre-signed ${int(signers.signed)} requests in ${f1((performance.now() - t) / 1000)} s on ${args.signers} thread(s) (${int(signers.rate())}/s)`);

    // Warm-up (JIT, pools, book): not reported beyond one line.
    if (args.warmup_s > 0) {
      const w = await guard(gen.runPhase({ port: server.port, lanes: signers.lanes, mode: 'closed', duration_ms: args.warmup_s * 1000 }));
      say(`warm-up: ${f1(w.window_ms / 1000)} s, ${int((w.in_window.responses * 1000) / w.window_ms)} requests/s` +
        `, orders ${int(w.stats.order.ok)} OK / ${int(w.stats.order.sent)}, rejects: ${mapText(mergeRejects([w]))}`);
      saneOrThrow('warm-up', w);
    }

    // Max throughput, closed loop, `runs` times.
    const runs: MaxRun[] = [];
    for (let r = 0; r < args.runs; r++) {
      if (r > 0) {
        const best = Math.max(...runs.map((x) => x.requests_per_s));
        est_rate = best * 1.3;
      }
      t = performance.now();
      const n = await guard(signers.ensurePerLane(perLane(est_rate * args.seconds), SIGN_BUDGET_MS));
      if (n > 0) say(`  (signed ${int(n)} more requests in ${f1((performance.now() - t) / 1000)} s)`);
      const from_ms = epochNowMs();
      const counting = args.perf_stat ? startPerfStat(server.pid, FRONT_EVENTS) : null;
      const m = await guard(measured(server, () => gen.runPhase({ port: server.port, lanes: signers!.lanes, mode: 'closed', duration_ms: args.seconds * 1000 })));
      const front_events = counting === null ? null : await counting.stop();
      const res = m.value;
      saneOrThrow(`run ${r + 1}`, res);
      const secs = res.window_ms / 1000;
      const to_ms = epochNowMs();
      const da = await guard(daLag(server.port, server.admin_token));
      runs.push({ result: res, cpu: m.cpu, orders_per_s: res.in_window.orders_ok / secs, requests_per_s: res.in_window.responses / secs, from_ms, to_ms, da, front_events });
    }

    // Metrics on/off, closed loop, A B B A (recording is back on afterwards).
    const cost_runs: CostRun[] = [];
    const metrics_port = metricsPortOf(server.stdout_lines);
    if (args.metrics_pairs > 0 && metrics_port === null) throw new Error('the server logged no metrics port');
    for (const recording of costOrder(args.metrics_pairs)) {
      const n = await guard(signers.ensurePerLane(perLane(est_rate * args.metrics_seconds), SIGN_BUDGET_MS));
      if (n > 0) say(`  (signed ${int(n)} more requests)`);
      await guard(setRecording(server.pid, metrics_port as number, recording));
      const m = await guard(measured(server, () => gen.runPhase({ port: server.port, lanes: signers!.lanes, mode: 'closed', duration_ms: args.metrics_seconds * 1000 })));
      saneOrThrow(`metrics ${recording ? 'on' : 'off'} run`, m.value);
      const answered = Math.max(1, m.value.in_window.responses);
      cost_runs.push({
        recording, requests_per_s: m.value.in_window.responses / (m.value.window_ms / 1000),
        server_cpu_us_per_request: ((m.cpu.server?.cpu_ms ?? 0) * 1000) / answered,
        front_cpu_us_per_request: ((m.cpu.server?.threads.find((t) => t.tid === server.pid)?.cpu_ms ?? 0) * 1000) / answered,
      });
    }
    if (metrics_port !== null) await guard(setRecording(server.pid, metrics_port, true));

    // Fixed rate, open loop.
    // It can only take what the server answers: at most the rate, at most ~1.5x the best max run.
    const best_rate = Math.max(...runs.map((x) => x.requests_per_s));
    const fixed_total = Math.ceil(Math.min(args.rate, Math.max(1.5 * best_rate, 1000)) * args.seconds);
    t = performance.now();
    const n2 = await guard(signers.ensurePerLane(Math.ceil(fixed_total / C) + 2, SIGN_BUDGET_MS));
    if (n2 > 0) say(`  (signed ${int(n2)} more requests in ${f1((performance.now() - t) / 1000)} s)`);
    const fx = await guard(measured(server, () => gen.runPhase({ port: server.port, lanes: signers!.lanes, mode: 'open', rate: args.rate, duration_ms: args.seconds * 1000 })));
    const lat = await guard(latencyPhases(gen, server, signers, args, medianMeanOfMiddleTwo(runs.map((x) => x.requests_per_s))));
    const signed_total = signers.signed;
    const sign_s = signers.sign_wall_ms / 1000;
    await signers.close();
    signers = null;

    // Stop the server cleanly (profiles are written at exit).
    await server.stop();

    const json = report({
      args, server, gen, vs, verify_threads, fund, runs, fx, lat, cost_runs, signed_total, sign_s, profile_dir, repo_root, t_start,
    }, say);
    console.log(JSON.stringify(json));
  } finally {
    if (signers !== null) await signers.close();
    await server.stop();
    removeDir(server.dir); // the server's temporary data dir (profiles, if any, live elsewhere)
  }
}

main().catch((e: unknown) => {
  console.error('load: failed:', e instanceof Error ? e.message : e);
  process.exit(1);
});
