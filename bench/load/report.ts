// The load bench's report: what every phase measured, as text lines and as the one JSON line
// (bench/load.ts runs the phases and prints the JSON this returns). Pure over the results, apart
// from reading the server's stage rows from its data dir and its CPU profiles, if any.
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Args } from './args.js';
import type { DaLag } from './da_lag.js';
import type { PhaseResult } from './lanes.js';
import { costFigures, costLines, type CostRun } from './metrics_cost.js';
import type { Generator } from './native_generator.js';
import {
  generatorUsPerRequest, inferRoles, roleCpu, schedByRole, shareText, sleepsPerRequestByRole, threadTable, usPerRequestByRole, type PhaseCpu,
} from './phase_cpu.js';
import type { LatencyPhases } from './phases.js';
import { clockCheckMs, gcFigures, type GcFigures } from './gc_trace.js';
import { summarizeProfileDir, type ThreadProfile } from './profile.js';
import { frontEventsText } from './perf_stat.js';
import { frontProfileByPhase } from './profile_window.js';
import type { ServerChild } from './server_child.js';
import { stallFigures, stallLines, type StallSources } from './stalls.js';
import { tailFigures, tailLines } from './tail.js';
import { sharesText } from './verify_checks.js';
import {
  ceilingFigures, ceilingLines, latencyFigures, latencyLines, LIGHT_RATE_PER_S, readStageRows, stageFigures, stageLines,
} from './targets.js';
import { f1, int, machineLoad, mapText, mergeRejects, ms, pct } from './text.js';
import { medianMeanOfMiddleTwo } from '../quantile.js';
import type { VerifyStage } from './verify_stage.js';

const TARGET_ORDERS_PER_S = 15_000;
const TARGET_P99_MS = 5;

export interface MaxRun {
  result: PhaseResult;
  cpu: PhaseCpu;
  orders_per_s: number;
  requests_per_s: number;
  /** The run's window on the server's stage clock (epoch ms). */
  from_ms: number;
  to_ms: number;
  /** The DA thread's backlog right after the run (bench/load/da_lag.ts). */
  da: DaLag;
  /** --perf-stat: the front thread's kernel events over the run (bench/load/perf_stat.ts), else null. */
  front_events: Map<string, number> | null;
}

/** Everything the phases measured (bench/load.ts main). */
export interface LoadResults {
  args: Args;
  /** Stopped by now: its pid, data dir and log lines are read. */
  server: ServerChild;
  gen: Generator;
  vs: VerifyStage;
  verify_threads: number;
  fund: { value: PhaseResult; cpu: PhaseCpu };
  runs: MaxRun[];
  fx: { value: PhaseResult; cpu: PhaseCpu };
  lat: LatencyPhases;
  cost_runs: CostRun[];
  signed_total: number;
  sign_s: number;
  profile_dir: string | null;
  repo_root: string;
  /** performance.now() when the bench started (its wall time is reported). */
  t_start: number;
}

/** Says the report's lines and returns the bench's JSON line (as an object). */
export function report(res: LoadResults, say: (line?: string) => void): Record<string, unknown> {
  const { args, server, gen, vs, verify_threads, fund, runs, fx, lat, cost_runs, signed_total, sign_s, profile_dir, repo_root, t_start } = res;
  const C = args.connections;
  const roles = inferRoles(server.pid, verify_threads, fund.cpu.server, runs[Math.floor(runs.length / 2)]?.cpu.server ?? null);
  say('');
  say(`max throughput: closed loop, ${C} connections (one request in flight each), ${args.seconds} s per run, ${args.runs} run(s)`);
  runs.forEach((x, i) => {
    const r = x.result;
    say(`  run ${i + 1}: ${int(x.orders_per_s)} accepted orders/s, ${int(x.requests_per_s)} answered requests/s` +
      ` (orders ${int(r.stats.order.ok)} OK / ${int(r.stats.order.sent)}, ${int(r.stats.order.with_fills)} traded as taker;` +
      ` cancels ${int(r.stats.cancel.ok)} OK / ${int(r.stats.cancel.sent)}) over ${f1(r.window_ms / 1000)} s${r.ended_early ? ' (pre-signed pool ran out: window shortened)' : ''}`);
    say(`         latency p50 ${pct(r.latency, 50)} ms, p99 ${pct(r.latency, 99)} ms, p999 ${pct(r.latency, 99.9)} ms, max ${ms(r.latency.maxValue)} ms;` +
      ` rejects: ${mapText(mergeRejects([r]))}` +
      (r.unanswered + r.socket_errors > 0 ? `; unanswered ${r.unanswered}, socket errors ${r.socket_errors}` : ''));
    say(`         CPU: ${shareText(x.cpu)}`);
    say(`         DA thread after the run: ${int(x.da.lag_batches)} batch(es) behind, caught up in ${int(x.da.catch_up_ms)} ms`);
  });
  const orders_med = medianMeanOfMiddleTwo(runs.map((x) => x.orders_per_s));
  const med_run = [...runs].sort((a, b) => a.orders_per_s - b.orders_per_s)[Math.floor((runs.length - 1) / 2)];
  say(`  median: ${int(orders_med)} accepted orders/s (${int(medianMeanOfMiddleTwo(runs.map((x) => x.requests_per_s)))} requests/s);` +
    ` target >= ${int(TARGET_ORDERS_PER_S)} signed orders/s: ${orders_med >= TARGET_ORDERS_PER_S ? 'PASS' : 'MISS'}`);

  const fr = fx.value;
  const fsecs = fr.window_ms / 1000;
  const fixed_p99 = pct(fr.latency, 99);
  say('');
  say(`fixed rate: open loop, ${int(args.rate)} signed requests/s (orders + cancels) for ${args.seconds} s over ${C} connections`);
  say(`  sent ${int(fr.stats.order.sent + fr.stats.cancel.sent)} (orders ${int(fr.stats.order.ok)} OK / ${int(fr.stats.order.sent)}, cancels ${int(fr.stats.cancel.ok)} OK / ${int(fr.stats.cancel.sent)}),` +
    ` ${int(fr.in_window.orders_ok / fsecs)} accepted orders/s; rejects: ${mapText(mergeRejects([fr]))}` +
    (fr.unanswered + fr.not_sent > 0 ? `; unanswered ${fr.unanswered}, never sent ${fr.not_sent}` : ''));
  say(`  latency from scheduled send: p50 ${pct(fr.latency, 50)} ms, p99 ${fixed_p99} ms, p999 ${pct(fr.latency, 99.9)} ms, max ${ms(fr.latency.maxValue)} ms;` +
    ` target p99 < ${TARGET_P99_MS} ms: ${fixed_p99 < TARGET_P99_MS ? 'PASS' : 'MISS'}`);
  say(`  (from actual write: p50 ${pct(fr.service, 50)} ms, p99 ${pct(fr.service, 99)} ms; generator send delay p50 ${pct(fr.send_delay, 50)} ms, p99 ${pct(fr.send_delay, 99)} ms)`);
  say(`  CPU: ${shareText(fx.cpu)}; generator ${f1(generatorUsPerRequest(fr, fx.cpu))} us per request`);

  say('');
  say('server CPU per thread (/proc/<pid>/task/*/stat utime+stime; % of one core; roles inferred, Node 20 leaves every comm "node"):');
  for (const line of threadTable('funding (unsigned deposits)', fund.cpu.server, roles)) say(line);
  for (const line of threadTable('max throughput (median run)', med_run.cpu.server, roles)) say(line);
  for (const line of threadTable(`fixed rate ${int(args.rate)}/s`, fx.cpu.server, roles)) say(line);
  for (const line of threadTable(`${int(LIGHT_RATE_PER_S)}/s`, lat.light_cpu.server, roles)) say(line);
  for (const line of threadTable(`half the max rate (${int(lat.half_rate)}/s)`, lat.half_cpu.server, roles)) say(line);
  const answered = med_run.result.in_window.responses + 1e-9;
  const by_role_max = usPerRequestByRole(med_run.cpu.server, roles, answered);
  const light_answered = lat.light.in_window.responses + 1e-9;
  const by_role_light = usPerRequestByRole(lat.light_cpu.server, roles, light_answered);
  const roleText = (r: Record<string, number>): string => Object.entries(r).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ');
  say(`  server CPU per answered request (median max run): ${f1(((med_run.cpu.server?.cpu_ms ?? 0) * 1000) / answered)} us = ${roleText(by_role_max)} (us)`);
  say(`  server CPU per answered request at ${int(LIGHT_RATE_PER_S)}/s: ${f1(((lat.light_cpu.server?.cpu_ms ?? 0) * 1000) / light_answered)} us = ${roleText(by_role_light)} (us)`);
  const sleeps_light = sleepsPerRequestByRole(lat.light_cpu.server, roles, light_answered);
  const sleeps_light_total = Math.round(Object.values(sleeps_light).reduce((a, b) => a + b, 0) * 100) / 100;
  say(`  server wake-ups (voluntary context switches) per answered request at ${int(LIGHT_RATE_PER_S)}/s: ${sleeps_light_total} = ${roleText(sleeps_light)}`);
  const half_answered = lat.half.in_window.responses + 1e-9;
  const by_role_half = usPerRequestByRole(lat.half_cpu.server, roles, half_answered);
  const sleeps_half = sleepsPerRequestByRole(lat.half_cpu.server, roles, half_answered);
  say(`  server CPU per answered request at half the max rate: ${f1(((lat.half_cpu.server?.cpu_ms ?? 0) * 1000) / half_answered)} us = ${roleText(by_role_half)} (us);` +
    ` wake-ups per request ${roleText(sleeps_half)}; CPU: ${shareText(lat.half_cpu)}`);
  const sched_light = schedByRole(lat.light_cpu.server, roles);
  const sched_half = schedByRole(lat.half_cpu.server, roles);
  const schedText = (r: Record<string, { cpu_pct: number; runq_wait_pct: number }>): string =>
    Object.entries(r).sort((a, b) => b[1].cpu_pct - a[1].cpu_pct).map(([k, v]) => `${k} ${v.cpu_pct}/${v.runq_wait_pct}`).join(', ');
  say(`  running / waiting for a core (% of the phase's wall time, /proc schedstat) at ${int(LIGHT_RATE_PER_S)}/s: ${schedText(sched_light)}; at half the max rate: ${schedText(sched_half)}`);
  say(`  signature checks at ${int(LIGHT_RATE_PER_S)}/s: ${sharesText(lat.light_cpu.checks)}; at half the max rate: ${sharesText(lat.half_cpu.checks)}; median max run: ${sharesText(med_run.cpu.checks)}`);
  const rc = roleCpu(med_run.cpu.server, roles);
  say(`  generator CPU per request (median max run, ${gen.name} generator): ${f1(generatorUsPerRequest(med_run.result, med_run.cpu))} us`);
  const verify_us = ((rc['verify worker'] ?? 0) * 1000) / answered;
  if (verify_us > 0) {
    say(`  verify worker: ${f1(verify_us)} us CPU per request -> ${int((1e6 / verify_us) * verify_threads)} requests/s if its ${verify_threads} thread(s) had whole cores` +
      ` (in-process measurement: ${f1(1e6 / vs.full_per_cpu_s)} us per signature)`);
  }
  const total_us = ((med_run.cpu.server?.cpu_ms ?? 0) * 1000) / answered + ((med_run.cpu.generator?.cpu_ms ?? 0) * 1000) / answered;
  say(`  whole-machine bound: (server + generator) ${f1(total_us)} us CPU per request on ${os.availableParallelism()} cores -> at most ~${int((os.availableParallelism() * 1e6) / total_us)} requests/s with nothing else running`);
  const busiest = [...(med_run.cpu.server?.threads ?? [])].sort((a, b) => b.pct - a.pct)[0];
  if (busiest !== undefined) {
    const cores_pct = os.availableParallelism() * 100;
    const mp = med_run.cpu.machine_pct ?? 0;
    const verdict = busiest.pct >= 85
      ? `the ${roles.get(busiest.tid) ?? 'other'} thread is saturated`
      : mp >= cores_pct * 0.9
        ? 'every core is busy: the server is bound by the CPU share it gets (its threads wait for a core), not by one saturated thread'
        : 'no thread and not the machine is saturated: bound by concurrency/latency (try more --connections)';
    say(`  limit: busiest server thread ${roles.get(busiest.tid) ?? 'other'} (tid ${busiest.tid}) at ${f1(busiest.pct)}% of a core; machine ${f1(mp)}% of ${cores_pct}% busy -> ${verdict}`);
  }

  let gc_max: GcFigures | null = null;
  let gc_light: GcFigures | null = null;
  if (server.gc !== null && med_run.cpu.gc !== null && lat.light_cpu.gc !== null) {
    const front = server.gc.front();
    gc_max = gcFigures(med_run.cpu.gc, front, med_run.result.in_window.responses);
    gc_light = gcFigures(lat.light_cpu.gc, front, lat.light.in_window.responses);
    const gcText = (g: GcFigures | null): string => g === null ? 'no --trace-gc-nvp line read (figures null)' : `front ${int(g.front_bytes_per_request)} bytes allocated (${int(g.front_promoted_per_request)} promoted), ` +
      `${g.front_scavenges_per_10k} scavenges and ${g.front_majors_per_10k} major GCs per 10k requests, GC pauses ${g.front_gc_pause_us_per_request} us per request (scavenges ${g.front_scavenge_pause_us_per_request}); ` +
      `all isolates ${int(g.all_isolates_bytes_per_request)} bytes, ${g.all_isolates_scavenges_per_10k} scavenges per 10k`;
    say(`  GC per answered request (--trace-gc-nvp, front isolate ${front}): median max run: ${gcText(gc_max)}`);
    say(`    at ${int(LIGHT_RATE_PER_S)}/s: ${gcText(gc_light)}` + (server.gc.skipped > 0 ? ` (${server.gc.skipped} nvp line(s) left out: implausible allocated=)` : ''));
    if (lat.half_cpu.gc !== null) say(`    at half the max rate: ${gcText(gcFigures(lat.half_cpu.gc, front, lat.half.in_window.responses))}`);
  }

  if (med_run.front_events !== null || lat.half_front_events !== null) {
    say(`  front thread per request (perf stat -t, the phase's whole span; task-clock in µs): median max run: ${frontEventsText(med_run.front_events, med_run.result.in_window.responses)}`);
    say(`    at half the max rate: ${frontEventsText(lat.half_front_events, lat.half.in_window.responses)}`);
  }

  let profiles: ThreadProfile[] = [];
  if (profile_dir) {
    profiles = summarizeProfileDir(profile_dir, repo_root, 12);
    say('');
    say(`server CPU profile (--cpu-prof, whole server life incl. setup; self time, TypeScript file:line via source maps; ${profile_dir}):`);
    for (const p of profiles) {
      say(`  ${p.role} (${p.file}): ${int(p.sampled_ms)} ms sampled: idle ${int(p.idle_ms)} ms, blocked (Atomics.wait, disk sync) ${int(p.blocked_ms)} ms` +
        ` (${p.blocked.join(', ') || 'none'}), running ${int(p.busy_ms)} ms; top self time (% of running):`);
      for (const h of p.top) say(`    ${f1(h.pct).padStart(5)}%  ${int(h.self_ms).padStart(6)} ms  ${h.name}  ${h.where}`);
    }
    frontProfileByPhase(profile_dir, repo_root, say, [
      { label: 'median max run', windows: [{ from_ms: med_run.from_ms, to_ms: med_run.to_ms }], requests: med_run.result.in_window.responses },
      { label: 'half the max rate', windows: [{ from_ms: lat.half_from_ms, to_ms: lat.half_to_ms }], requests: lat.half.in_window.responses },
    ]);
  }

  const total_s = (performance.now() - t_start) / 1000;
  say('');
  say(`machine at the end: ${machineLoad()}`);
  say(`bench wall time ${f1(total_s)} s; ${int(signed_total)} requests pre-signed in ${f1(sign_s)} s (${int(signed_total / Math.max(sign_s, 1e-3))}/s on ${args.signers} thread(s))`);
  const med_answered = med_run.result.in_window.responses;
  const ceiling = ceilingFigures(vs.recover_per_cpu_s, os.availableParallelism(),
    (med_run.result.in_window.orders_ok + med_run.result.in_window.cancels_ok) / (med_run.result.window_ms / 1000),
    med_run.cpu.server?.cpu_ms ?? 0, med_answered);
  const latency = latencyFigures(lat.light.latency, lat.half.latency, lat.half_rate);
  const stage_rows = readStageRows(path.join(server.dir, 'data'));
  const stages = stageFigures(stage_rows?.rows ?? null, { from_ms: lat.light_from_ms, to_ms: lat.light_to_ms }, med_run,
    { from_ms: lat.half_from_ms, to_ms: lat.half_to_ms });
  const tail = stage_rows !== null && lat.light.records !== undefined ? tailFigures(stage_rows.rows, lat.light.records, stage_rows.gc_pauses) : null;
  const tail_half = stage_rows !== null && lat.half.records !== undefined ? tailFigures(stage_rows.rows, lat.half.records, stage_rows.gc_pauses) : null;
  // Other isolates' GC pauses on the epoch clock (`--gc`), the front's isolate left out (its
  // pauses come exact from its PerformanceObserver, in the stage file).
  const front_iso = server.gc?.front() ?? null;
  const traced = server.gc?.pausesByIsolate(performance.timeOrigin) ?? null;
  const other_gc = traced === null ? null : [...traced].filter(([iso]) => iso !== front_iso).map(([, p]) => p);
  const traced_front = front_iso === null ? undefined : traced?.get(front_iso);
  const gc_clock_check_ms = stage_rows === null || traced_front === undefined ? null : clockCheckMs(stage_rows.gc_pauses, traced_front);
  const stallSources = (timeline: StallSources['timeline']): StallSources => ({
    rows: stage_rows?.rows ?? null, rows_cut_off_ms: stage_rows?.cut_off_ms ?? null, front_gc: stage_rows?.gc_pauses ?? null, other_gc, timeline,
  });
  const stalls_light = stallFigures(lat.light.records, stallSources(lat.light_timeline));
  const stalls_half = stallFigures(lat.half.records, stallSources(lat.half_timeline));
  say('');
  for (const line of [...ceilingLines(ceiling), ...latencyLines(latency),
    // A WS post takes no stage stamps (the server stamps HTTP exchanges: src/gateway/context.ts openExchange).
    ...(args.transport === 'ws' && stages.stages_us_at_1000 === null ? ['latency per stage: none over --transport ws (the server stamps the stages of HTTP exchanges only)'] : stageLines(stages)), ...tailLines(tail), ...tailLines(tail_half, 'half the max rate'),
    ...stallLines(stalls_light, `${int(LIGHT_RATE_PER_S)}/s`), ...stallLines(stalls_half, 'half the max rate')]) say(line);
  if (stage_rows !== null && stage_rows.cut_off_ms !== null) {
    say(`  (the server kept STAGE_ROWS_MAX stage rows and dropped ${stage_rows.dropped} more, from the batch at ${new Date(stage_rows.cut_off_ms).toISOString()} on: journal fields of windows past it are null)`);
  }
  if (server.gc !== null) say(`  (other isolates' GC pauses placed from --trace-gc-nvp stamps: the front's traced pauses lie a median ${gc_clock_check_ms ?? 'n/a'} ms from its observed ones)`);
  const cost = cost_runs.length > 0 ? costFigures(cost_runs) : null;
  if (cost !== null) {
    say('');
    for (const line of costLines(cost_runs, cost, args.metrics_seconds)) say(line);
  }
  if (args.background !== null) say(`(server ran with threads.background nice ${args.background.nice}, policy ${args.background.policy}: ${server.stdout_lines.filter((l) => l.includes('config threads.background')).map((l) => /"msg":"([^"]*)"/.exec(l)?.[1] ?? l).join('; ') || 'no priority line in its log'})`);
  if (args.pipeline_cpu !== null) say(`(server ran with threads.pipeline_cpu ${args.pipeline_cpu}: ${server.stdout_lines.find((l) => l.includes('threads placed') || l.includes('threads not placed')) ?? 'no placement line in its log'})`);
  if (args.matcher_cpu !== null) say(`(server ran with matcher.cpu ${args.matcher_cpu}: ${server.stdout_lines.find((l) => l.includes('matcher thread')) ?? 'no pinning line in its log'})`);
  const json = {
    bench: 'load',
    orders_per_s: Math.round(orders_med),
    p50_ms: pct(fr.latency, 50),
    p99_ms: fixed_p99,
    p999_ms: pct(fr.latency, 99.9),
    fixed_rate_per_s: args.rate,
    fixed_unanswered: fr.unanswered,
    fixed_not_sent: fr.not_sent,
    max_rate_p50_ms: pct(med_run.result.latency, 50),
    max_rate_p99_ms: pct(med_run.result.latency, 99),
    max_rate_p999_ms: pct(med_run.result.latency, 99.9),
    max_rate_runs_orders_per_s: runs.map((x) => Math.round(x.orders_per_s)),
    requests_per_s: Math.round(medianMeanOfMiddleTwo(runs.map((x) => x.requests_per_s))),
    wallets: args.wallets,
    connections: C,
    rejected: [...mergeRejects([...runs.map((x) => x.result), fr]).values()].reduce((s, v) => s + v, 0),
    server_cpu_pct: Math.round(med_run.cpu.server?.pct ?? 0),
    other_processes_cpu_pct: otherPct(med_run.cpu),
    generator_cpu_pct: Math.round(med_run.cpu.generator?.pct ?? 0),
    verify_per_cpu_s_1thread: Math.round(vs.full_per_cpu_s),
    cores: os.availableParallelism(),
    orders_target_pass: orders_med >= TARGET_ORDERS_PER_S,
    p99_target_pass: fixed_p99 < TARGET_P99_MS,
    generator: gen.name,
    // Only with --transport ws (the http run's line keeps its fields as they were).
    ...(args.transport === 'ws' ? { transport: args.transport, ws_lanes_per_connection: args.ws_lanes_per_connection } : {}),
    generator_io: med_run.result.generator_io ?? null,
    generator_cpu_us_per_request: Math.round(generatorUsPerRequest(med_run.result, med_run.cpu) * 10) / 10,
    fixed_generator_cpu_us_per_request: Math.round(generatorUsPerRequest(fr, fx.cpu) * 10) / 10,
    // The early wake the fixed-rate phases ran with (loadgen --spin-us; null: a binary without it, or the Node generator).
    generator_spin_us_at_1000: lat.light.generator_spin_us ?? null,
    fixed_generator_spin_us: fr.generator_spin_us ?? null,
    ...ceiling,
    signature_recovery_library: vs.recover_library,
    // The library above is this build's recoverer (bench/load/verify_stage.ts); a --server-main
    // server is another build and may recover with another one.
    signature_recovery_library_note: args.server_main === null ? null : 'this build\'s recoverer; the --server-main server may recover with another library',
    ...latency,
    ...stages,
    tail_stages_us_at_1000: tail,
    tail_stages_us_at_half_max: tail_half,
    stall_episodes_at_1000: stalls_light,
    stall_episodes_at_half_max: stalls_half,
    gc_trace_clock_check_ms: gc_clock_check_ms,
    server_cpu_us_per_request_by_thread: by_role_max,
    server_cpu_us_per_request_at_1000: Math.round(((lat.light_cpu.server?.cpu_ms ?? 0) * 1000) / light_answered),
    server_cpu_us_per_request_at_1000_by_thread: by_role_light,
    server_wakeups_per_request_at_1000: sleeps_light_total,
    server_wakeups_per_request_at_1000_by_thread: sleeps_light,
    server_cpu_us_per_request_at_half_max: Math.round(((lat.half_cpu.server?.cpu_ms ?? 0) * 1000) / half_answered),
    server_cpu_us_per_request_at_half_max_by_thread: by_role_half,
    server_wakeups_per_request_at_half_max_by_thread: sleeps_half,
    server_sched_pct_at_1000_by_thread: sched_light,
    server_sched_pct_at_half_max_by_thread: sched_half,
    other_processes_cpu_pct_at_half_max: otherPct(lat.half_cpu),
    verify_checks_at_1000: lat.light_cpu.checks,
    verify_checks_at_half_max: lat.half_cpu.checks,
    gc_at_max: gc_max,
    gc_at_1000: gc_light,
    verify_checks_at_max: med_run.cpu.checks,
    matcher_cpu: args.matcher_cpu,
    pipeline_cpu: args.pipeline_cpu,
    threads_background: args.background,
    verify_steal_after_us: args.verify_steal_after_us,
    verify_task_items: args.verify_task_items,
    verify_inline_items: args.verify_inline_items,
    verify_inline_busy_max_pct: args.verify_inline_busy_max_pct,
    da_lag_batches_after_max: Math.max(...runs.map((x) => x.da.lag_batches)),
    da_catch_up_ms_after_max: Math.max(...runs.map((x) => x.da.catch_up_ms)),
    ...(cost ?? {}),
  };
  return json;
}

/** What other processes took of the machine over a phase (% of one core; null without /proc/stat). */
function otherPct(c: PhaseCpu): number | null {
  return c.machine_pct === null ? null : Math.round(Math.max(0, c.machine_pct - (c.server?.pct ?? 0) - (c.generator?.pct ?? 0)));
}
