// The 1,000 requests/s path of two server builds side by side (issue 11): the load bench's light
// phase only, alternated between two servers that run at once, so both see the same machine in
// the same minutes (the machine is shared; a whole `bench/load.ts` per build takes ~75 s each and
// sees a different load). Each server gets its own funded wallets and pre-signed lanes (the
// load bench's signers and generator, the same seed for both); then `warmup_phases` untimed and
// `rounds` timed light phases each, in the order bench/load/ab_servers.ts abRunOrder gives:
// warm-ups alternated, timed phases in the Thue–Morse order (A B B A B A A B ...), the side that
// goes first drawn from --order-seed (printed; random unless given). Why (docs/benchmarks.md
// "h27l"): until h27l A was started, funded, signed and warmed up first, sat idle through all of
// B's, and ran the first timed phase; rounds went A B B A A B B A, so 3 of A's 4 timed phases
// came right after one of B's (B: 2 of 4) after longer idle gaps, and A's tails were worse in 3 of
// 4 runs whatever the build. Now each side has the same number of phases after its own and after
// the other's, the same idle gaps, and (even rounds) the same mean position; the warm-ups run
// exactly as the timed phases do (records, CPU sampling, the side's generator options), so the
// bench process and the generator are as warm for the first timed phase as for the last.
// Reports per build the medians over its phases
// of: client latency p50/p99/p999 (from scheduled send), the server's stage p50s (its stage rows,
// src/gateway/stage_timings.ts) and p99s, the tail split's medians (send_delay, to_server, to_client:
// bench/load/tail.ts), for the answers at or above each phase's p99 their batch_wait and the part
// of it behind the previous batch's apply and commit (the same split), and the server's CPU per
// answered request by thread role. Then per build the load bench's tail table (bench/load/tail.ts
// tailLines; JSON `tail_stages_us`) over its timed phases' answers pooled: what the answers at or
// above p99 and p999 spent per part, batch_wait behind the previous batch included.
//
//   npx tsc -p tsconfig.json && node dist/bench/light_ab.js --server-b /other/build/dist/src/main.js
//     --server-a F   the A build's compiled server (default: this build's dist/src/main.js)
//     --server-b F   the B build's (default: this build's as well: an A/A run shows the noise)
//     --rounds N     light phases per build (default 6; even: the order's positions balance too);
//                    --seconds S per phase (default 5)
//     --order-seed N which side's timed phase comes first (and so the whole order): 0..2^32-1,
//                    default drawn at random and printed (a run is repeated with the same seed)
//     --wallets N (default 1000), --connections N (default 64), --rate R (default 1000)
//     --warmup-phases N  untimed light phases per server first (default 4: V8's background
//                    compiles settle after ~30 s, docs/benchmarks.md h23o)
//     --profile-dir D  run B with --cpu-prof into D (its whole life: funding and warm-up included);
//                    B's front profile is then also cut to its measured phases (µs per request)
//     --perf-stat    count the front thread's kernel events in each phase (`perf stat -t`:
//                    syscalls by kind, context switches, wake-ups it issues; no slowdown, unlike strace)
//     --config-a J, --config-b J  JSON merged over that server's config (sections replaced whole),
//                    e.g. --config-b '{"front":{"answer_spin_us":1000}}': an A/B of one build's setting
//     --generator-slice-us-a N, --generator-slice-us-b N  the native generator's own EEVDF slice
//                    (loadgen --slice-us) in that build's phases: an A/B of the measuring tool, not
//                    of the server (same builds and configs: the difference is the tool's)
//     --generator-spin-us-a N, --generator-spin-us-b N  the native generator's early wake (loadgen
//                    --spin-us, 0..1000; 0: none; absent: the binary's default) in that build's phases:
//                    also an A/B of the tool; each side reports its send_delay p50/p99 and the
//                    generator's CPU per request
// Ends with ONE JSON line {"bench":"light_ab",...}.
import { randomInt } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { STAGES } from '../src/gateway/stage_timings.js';
import { Knobs } from './knobs.js';
import { GENERATOR_SPIN_US_MAX, lightKnobs, lightPhaseArgs, type Args } from './load/args.js';
import { chooseGenerator } from './load/native_generator.js';
import { inferRoles, measured, usPerRequestByRole, type PhaseCpu } from './load/phase_cpu.js';
import { abFirstSide, abRunOrder, AbServers, type AbBuild, type AbServer, type AbSide } from './load/ab_servers.js';
import { FRONT_EVENTS, startPerfStat } from './load/perf_stat.js';
import { frontProfileByPhase } from './load/profile_window.js';
import { tailFigures, tailFiguresOfPhases, tailLines, type TailPhase } from './load/tail.js';
import { epochNowMs, readStageRows } from './load/targets.js';
import { machineLoad } from './load/text.js';
import { medianMeanOfMiddleTwo } from './quantile.js';
import { stagePercentiles } from '../src/gateway/stage_timings.js';
import type { PhaseResult } from './load/lanes.js';

const ADMIN_TOKEN = 'light-ab-admin-token';

interface Phase {
  from_ms: number;
  to_ms: number;
  result: PhaseResult;
  cpu: PhaseCpu;
  /** The front thread's kernel event counts over the phase (--perf-stat), else null. */
  front_events: Map<string, number> | null;
}

interface Way extends AbServer {
  phases: Phase[];
}

function jsonKnob(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  const v: unknown = JSON.parse(text);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new RangeError('--config-a/--config-b take a JSON object');
  return v as Record<string, unknown>;
}

function pct(r: PhaseResult, p: number): number {
  return r.latency.totalCount === 0 ? 0 : Math.round(r.latency.getValueAtPercentile(p)) / 1000;
}

const r1 = (x: number): number => Math.round(x * 10) / 10;

async function main(): Promise<void> {
  const knobs = new Knobs();
  const here = path.dirname(fileURLToPath(import.meta.url));
  const own = path.resolve(here, '../src/main.js');
  const { a_js, b_js, rounds, seconds, rate, wallets, connections, warmup_phases } = lightKnobs(knobs, own, 6);
  const profile_dir = knobs.optionalString('profile-dir') ?? null;
  const extra = { A: jsonKnob(knobs.optionalString('config-a')), B: jsonKnob(knobs.optionalString('config-b')) };
  // 0 (the default): the kernel's default slice; else 100..100000 µs, the kernel's range.
  const genSlice = (name: string): number | undefined => {
    const us = knobs.number(name, 0, 0, 100_000);
    if (us !== 0 && us < 100) throw new RangeError(`${name} must be 0 (the kernel's default) or in [100, 100000] µs, got ${us}`);
    return us === 0 ? undefined : us;
  };
  const gen_slice_us = { A: genSlice('generator-slice-us-a'), B: genSlice('generator-slice-us-b') };
  // Absent: the binary's default early wake (it reports which it used).
  const genSpin = (name: string): number | undefined =>
    knobs.optionalString(name) === undefined ? undefined : knobs.number(name, 0, 0, GENERATOR_SPIN_US_MAX);
  const gen_spin_us = { A: genSpin('generator-spin-us-a'), B: genSpin('generator-spin-us-b') };
  const order_seed = knobs.optionalString('order-seed') === undefined ? randomInt(0x1_0000_0000) : knobs.number('order-seed', 0, 0, 0xffff_ffff);
  const perf_stat = knobs.flag('perf-stat');
  knobs.finish();
  const order = abRunOrder(rounds, warmup_phases, abFirstSide(order_seed));
  const args: Args = lightPhaseArgs({ wallets, connections, seconds, rate, seed: 'ringbook-light-ab' });
  console.log(`light_ab: ${new Date().toISOString()}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? '?'}), ${machineLoad()}`);
  const slice_note = (n: 'A' | 'B'): string => (gen_slice_us[n] === undefined ? '' : `, generator slice ${gen_slice_us[n]} us`) +
    (gen_spin_us[n] === undefined ? '' : `, generator early wake ${gen_spin_us[n]} us`);
  console.log(`  A ${a_js} ${JSON.stringify(extra.A)}${slice_note('A')}\n  B ${b_js} ${JSON.stringify(extra.B)}${slice_note('B')}\n  ${rounds} rounds x ${seconds} s at ${rate}/s, ${wallets} wallets on ${connections} connections`);
  console.log(`  order (--order-seed ${order_seed}): warm-up ${order.warmup.join('')}, timed ${order.timed.join('')}`);
  const gen = chooseGenerator(null);
  if (gen.name !== 'native' && (gen_slice_us.A !== undefined || gen_slice_us.B !== undefined)) throw new RangeError(`--generator-slice-us-a/-b need the native generator: ${gen.note}`);
  if (gen.name !== 'native' && (gen_spin_us.A !== undefined || gen_spin_us.B !== undefined)) throw new RangeError(`--generator-spin-us-a/-b need the native generator: ${gen.note}`);
  // Stopped once, whichever comes first: the normal end (before the stage rows are read), a
  // failure (the finally below) or a signal.
  const ab = new AbServers(gen, args, { rate, seconds, connections, warmup_phases }, ADMIN_TOKEN);
  /** One light phase on `w`, timed or not: the warm-ups run this too (records, CPU sampling, generator options). */
  const lightPhase = async (w: AbServer): Promise<Phase> => {
    const from_ms = epochNowMs();
    const counting = perf_stat ? startPerfStat(w.server.pid, FRONT_EVENTS) : null;
    const m = await measured(w.server, () => gen.runPhase({ port: w.server.port, lanes: w.signers.lanes, mode: 'open', rate, duration_ms: seconds * 1000, records: true, generator_slice_us: gen_slice_us[w.name], generator_spin_us: gen_spin_us[w.name] }));
    const to_ms = epochNowMs();
    const front_events = counting === null ? null : await counting.stop();
    return { from_ms, to_ms, result: m.value, cpu: m.cpu, front_events };
  };
  try {
    const build = (name: AbSide, main_js: string): AbBuild => ({
      name, main_js,
      config: { diagnostics: { stage_timings: true }, metrics: { enabled: true, port: 0 }, ...extra[name] },
      node_flags: name === 'B' && profile_dir !== null ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profile_dir)}`] : [],
    });
    const pair = await ab.startPair({ A: build('A', a_js), B: build('B', b_js) }, rounds, order, lightPhase);
    const by_side: Record<AbSide, Way> = { A: { ...pair.A, phases: [] }, B: { ...pair.B, phases: [] } };
    const ways: Way[] = [by_side.A, by_side.B];
    for (const [i, side] of order.timed.entries()) {
      const w = by_side[side];
      const ph = await lightPhase(w);
      w.phases.push(ph);
      console.log(`  phase ${i + 1}/${order.timed.length} ${w.name} (its ${w.phases.length}): p50 ${pct(ph.result, 50)} ms, p99 ${pct(ph.result, 99)} ms, p999 ${pct(ph.result, 99.9)} ms, ` +
        `server ${r1(((ph.cpu.server?.cpu_ms ?? 0) * 1000) / Math.max(1, ph.result.in_window.responses))} us CPU/request, machine ${r1(ph.cpu.machine_pct ?? 0)}%`);
    }
    await ab.stop();
    const b_way = ways.find((w) => w.name === 'B');
    if (profile_dir !== null && b_way !== undefined) {
      // B's front profile over its measured phases only (funding and warm-up left out).
      frontProfileByPhase(path.resolve(profile_dir), path.resolve(here, '../..'), (l) => console.log(l), [{
        label: `B's ${b_way.phases.length} phases at ${rate}/s`, windows: b_way.phases.map((p) => ({ from_ms: p.from_ms, to_ms: p.to_ms })),
        requests: b_way.phases.reduce((s, p) => s + p.result.in_window.responses, 0),
      }]);
    }
    const out: Record<string, unknown> = {};
    for (const w of ways) {
      const rows = readStageRows(path.join(w.server.dir, 'data'));
      const per = w.phases.map((ph) => {
        const st = rows === null ? null : stagePercentiles(rows.rows, ph.from_ms, ph.to_ms);
        const tail = rows !== null && ph.result.records !== undefined ? tailFigures(rows.rows, ph.result.records, rows.gc_pauses) : null;
        // A phase with no stage rows in its window has no stage figures (null, not 0).
        const stamped = st !== null && st.count > 0 ? st : null;
        const roles = inferRoles(w.server.pid, Math.max(1, os.availableParallelism() - 1), null, ph.cpu.server);
        const by_role = usPerRequestByRole(ph.cpu.server, roles, Math.max(1, ph.result.in_window.responses));
        return {
          p50_ms: pct(ph.result, 50), p99_ms: pct(ph.result, 99), p999_ms: pct(ph.result, 99.9),
          server_cpu_us: ((ph.cpu.server?.cpu_ms ?? 0) * 1000) / Math.max(1, ph.result.in_window.responses),
          // The generator's own lateness (loadgen's send_delay histogram: every request, not only the joined ones) and CPU.
          send_delay_p50_us: ph.result.send_delay.totalCount === 0 ? null : ph.result.send_delay.getValueAtPercentile(50),
          send_delay_p99_us: ph.result.send_delay.totalCount === 0 ? null : ph.result.send_delay.getValueAtPercentile(99),
          generator_cpu_us: ph.result.generator_cpu_ms === undefined ? null : (ph.result.generator_cpu_ms * 1000) / Math.max(1, ph.result.in_window.responses),
          generator_spin_us: ph.result.generator_spin_us ?? null,
          machine_pct: ph.cpu.machine_pct ?? 0,
          stages: stamped === null ? null : Object.fromEntries(STAGES.map((s) => [s, stamped.stages[s].p50_us])),
          stages_p99: stamped === null ? null : Object.fromEntries(STAGES.map((s) => [s, stamped.stages[s].p99_us])),
          server_p50_us: stamped?.server_total.p50_us ?? null,
          tail: tail?.median_us ?? null,
          // The answers at or above the phase's p99: their mean batch_wait and the part of it spent
          // behind the previous batch's apply and commit (bench/load/tail.ts; the rest: the matcher
          // waking or waiting for a core).
          slow_batch_wait_us: tail?.above_p99.mean_us.batch_wait ?? null,
          slow_batch_wait_behind_previous_us: tail?.above_p99.batch_wait_behind_previous_us_mean ?? null,
          by_role,
          // The front thread's kernel events per answered request (--perf-stat; the phase's whole
          // span, so a few requests' worth of the generator's start and drain beyond the window).
          front_events: ph.front_events === null ? null
            : Object.fromEntries([...ph.front_events].map(([k, v]) => [k, v / Math.max(1, ph.result.in_window.responses)])),
        };
      });
      // The tail split over the build's timed phases pooled (one p99 over all their answers).
      const timed: TailPhase[] = w.phases.flatMap((ph) =>
        ph.result.records === undefined ? [] : [{ records: ph.result.records, from_ms: ph.from_ms, to_ms: ph.to_ms }]);
      const tail_pooled = rows === null ? null : tailFiguresOfPhases(rows.rows, timed, rows.gc_pauses);
      const med = (f: (x: (typeof per)[number]) => number): number => r1(medianMeanOfMiddleTwo(per.map(f)));
      /** The median over the phases that have the figure; null when none has it (no stage rows, no tail records). */
      const medOf = (f: (x: (typeof per)[number]) => number | null | undefined): number | null => {
        const xs = per.map(f).filter((v): v is number => typeof v === 'number');
        return xs.length === 0 ? null : r1(medianMeanOfMiddleTwo(xs));
      };
      const stage_med: Record<string, number | null> = {};
      for (const s of STAGES) stage_med[s] = medOf((x) => x.stages?.[s]);
      for (const part of ['send_delay', 'to_server', 'to_client'] as const) stage_med[part] = medOf((x) => x.tail?.[part]);
      // The stages' p99s (each phase's, then the median over phases): where a scheduling change
      // (a thread's slice, its priority) shows, while the p50s stay level.
      const stage_p99_med: Record<string, number | null> = {};
      for (const s of STAGES) stage_p99_med[s] = medOf((x) => x.stages_p99?.[s]);
      const roles = new Set(per.flatMap((x) => Object.keys(x.by_role)));
      const role_med: Record<string, number> = {};
      for (const k of roles) role_med[k] = med((x) => x.by_role[k] ?? 0);
      const summary = {
        p50_ms: med((x) => x.p50_ms * 1000) / 1000, p99_ms: med((x) => x.p99_ms * 1000) / 1000, p999_ms: med((x) => x.p999_ms * 1000) / 1000,
        server_p50_us: medOf((x) => x.server_p50_us), server_cpu_us_per_request: med((x) => x.server_cpu_us), machine_pct: med((x) => x.machine_pct),
        stage_p50_us: stage_med, stage_p99_us: stage_p99_med, cpu_us_per_request_by_role: role_med, phases: per.length,
        send_delay_p50_us: medOf((x) => x.send_delay_p50_us), send_delay_p99_us: medOf((x) => x.send_delay_p99_us),
        generator_cpu_us_per_request: medOf((x) => x.generator_cpu_us), generator_spin_us: per[0]?.generator_spin_us ?? null,
        front_events_per_request: perf_stat ? Object.fromEntries(FRONT_EVENTS.map((e) => [e, medOf((x) => x.front_events?.[e])])) : null,
        slow_batch_wait_us: medOf((x) => x.slow_batch_wait_us),
        slow_batch_wait_behind_previous_us: medOf((x) => x.slow_batch_wait_behind_previous_us),
        tail_stages_us: tail_pooled,
      };
      out[w.name] = summary;
      console.log(`${w.name} (${w.main_js}): medians over ${per.length} phases: p50 ${summary.p50_ms} ms, p99 ${summary.p99_ms} ms, p999 ${summary.p999_ms} ms; ` +
        `server arrive->answer p50 ${summary.server_p50_us} us; server CPU ${summary.server_cpu_us_per_request} us/request (${JSON.stringify(role_med)}); machine ${summary.machine_pct}%`);
      console.log(`  generator: early wake ${summary.generator_spin_us ?? 'none'} us, send_delay p50 ${summary.send_delay_p50_us} us, p99 ${summary.send_delay_p99_us} us, CPU ${summary.generator_cpu_us_per_request} us/request`);
      console.log(`  stage p50 medians (us): ${Object.entries(stage_med).map(([k, v]) => `${k} ${v ?? 'none'}`).join(', ')}`);
      console.log(`  stage p99 medians (us): ${Object.entries(stage_p99_med).map(([k, v]) => `${k} ${v ?? 'none'}`).join(', ')}`);
      console.log(`  answers at or above p99: batch_wait ${summary.slow_batch_wait_us ?? 'none'} us (mean; median over phases), ` +
        `of which behind the previous batch's apply and commit ${summary.slow_batch_wait_behind_previous_us ?? 'none'} us`);
      if (summary.front_events_per_request !== null) {
        // r1 rounds to 0.1: the counts are printed at 0.01 from the phases' own values.
        const ev = FRONT_EVENTS.map((e) => `${e} ${(medianMeanOfMiddleTwo(per.map((x) => x.front_events?.[e] ?? 0))).toFixed(3)}`);
        console.log(`  front thread per request (perf stat -t; task-clock in ms): ${ev.join(', ')}`);
      }
      for (const line of tailLines(tail_pooled, `${rate}/s (${w.name}'s ${timed.length} timed phase${timed.length === 1 ? '' : 's'} pooled)`)) console.log(line);
    }
    console.log(JSON.stringify({ bench: 'light_ab', rate_per_s: rate, seconds, rounds, server_a: a_js, server_b: b_js, config_a: extra.A, config_b: extra.B,
      generator_slice_us_a: gen_slice_us.A ?? null, generator_slice_us_b: gen_slice_us.B ?? null,
      generator_spin_us_a: gen_spin_us.A ?? null, generator_spin_us_b: gen_spin_us.B ?? null,
      order_seed, warmup_order: order.warmup.join(''), order: order.timed.join(''), ...out }));
  } finally {
    await ab.dispose();
  }
}

main().catch((e: unknown) => {
  console.error('light_ab: failed:', e instanceof Error ? e.stack : e);
  process.exit(1);
});
