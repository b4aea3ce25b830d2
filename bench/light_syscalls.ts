// Syscalls and wake-ups per request at a light 1,000 requests/s, two server builds side by side
// (issue 11): counts that do not depend on the machine's noise, unlike CPU time. Each server gets
// its own funded wallets and pre-signed lanes, set up and warmed up as bench/light_ab.ts does
// (AbServers.startPair: each step for both servers before the next, warm-ups alternated); then
// `rounds` turns a build in light_ab's symmetric order (abRunOrder: Thue–Morse, A B B A B A A B
// ..., the first side drawn from --order-seed; bench/load/syscalls_plan.ts). A turn is three light
// phases: a plain one that reads the voluntary context switches of every server thread before and
// after (/proc/<pid>/task/<tid>/status), one under `strace -c` on the front thread alone (the
// server's main thread) and one under `strace -f -c` on the whole server. strace slows the traced
// threads, so the traced phases' CPU and latency mean nothing; their counts per answered request
// are what is reported (medians over turns).
//
//   npx tsc -p tsconfig.json && node dist/bench/light_syscalls.js --server-a F --server-b F
//     --rounds N (default 3), --seconds S (default 5), --rate R (default 1000), --wallets, --connections,
//     --warmup-phases N, --order-seed N (0..2^32-1; default drawn at random and printed),
//     --trace-file F (B's first front phase traced call by call into F, not counted)
// Ends with ONE JSON line {"bench":"light_syscalls",...}.
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Knobs } from './knobs.js';
import { lightKnobs, lightPhaseArgs, type Args } from './load/args.js';
import { chooseGenerator } from './load/native_generator.js';
import { AbServers, type AbBuild, type AbServer, type AbSide } from './load/ab_servers.js';
import { parseStraceTable } from './load/strace_table.js';
import { syscallsPlan } from './load/syscalls_plan.js';
import { medianMeanOfMiddleTwo } from './quantile.js';

const ADMIN_TOKEN = 'light-syscalls-admin-token';

interface Counts {
  /** The front thread's user and kernel CPU per answered request (µs) in the plain phase. */
  front_user_us: number;
  front_sys_us: number;
  front_wakeups: number;
  server_wakeups: number;
  /** Wake-ups per request by thread name (/proc comm: the matcher, the DA worker, libuv's pool...). */
  wakeups_by_thread: Record<string, number>;
  front_syscalls: Record<string, number>;
  server_syscalls: Record<string, number>;
}

/** Voluntary context switches per thread of `pid`. */
function switches(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      const m = /voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8'));
      if (m) out.set(Number(t), Number(m[1]));
    } catch {
      // the thread ended
    }
  }
  return out;
}

/** Each thread's name (/proc comm); the main thread is called `front` here. */
function threadName(pid: number, tid: number): string {
  if (tid === pid) return 'front';
  try {
    return readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
  } catch {
    return '?';
  }
}

/** utime and stime (clock ticks) of one thread. */
function cpuTicks(pid: number, tid: number): [number, number] {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state is field 3, utime 14, stime 15 (1-based over the whole line).
  return [Number(f[11]), Number(f[12])];
}

/** Runs `fn` under `strace -c` attached to `target` (a tid, or with `follow` a pid and its threads). */
async function straced<T>(target: number, follow: boolean, fn: () => Promise<T>, trace_file: string | null = null): Promise<{ value: T; calls: Record<string, number> }> {
  const how = trace_file === null ? ['-c'] : ['-tt', '-o', trace_file];
  const child = spawn('strace', [...(follow ? ['-f'] : []), ...how, '-p', String(target)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (b: Buffer) => { err += b.toString(); });
  // strace reports "Process N attached" once attached.
  await new Promise<void>((resolve) => {
    const check = (): void => { if (err.includes('attached')) resolve(); else setTimeout(check, 20); };
    check();
  });
  const value = await fn();
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  child.kill('SIGINT');
  await exited;
  return { value, calls: parseStraceTable(err) };
}

/** USER_HZ is 100 on Linux (clock ticks of /proc stat). */
const TICK_US = 10_000;
const r2 = (x: number): number => Math.round(x * 100) / 100;

function perRequest(calls: Record<string, number>, answered: number): Record<string, number> {
  const out: Record<string, number> = {};
  let total = 0;
  for (const [k, v] of Object.entries(calls)) { total += v; if (v / answered >= 0.01) out[k] = r2(v / answered); }
  return { total: r2(total / answered), ...out };
}

async function main(): Promise<void> {
  const knobs = new Knobs();
  const here = path.dirname(fileURLToPath(import.meta.url));
  const { a_js, b_js, rounds, seconds, rate, wallets, connections, warmup_phases } = lightKnobs(knobs, path.resolve(here, '../src/main.js'), 3);
  // --trace-file F: B's first front phase is traced call by call into F (strace -tt), not counted.
  const trace_file = knobs.optionalString('trace-file') ?? null;
  const order_seed = knobs.optionalString('order-seed') === undefined ? randomInt(0x1_0000_0000) : knobs.number('order-seed', 0, 0, 0xffff_ffff);
  knobs.finish();
  const plan = syscallsPlan(rounds, warmup_phases, order_seed, trace_file !== null);
  console.log(`light_syscalls: ${rounds} turns x 3 phases x ${seconds} s at ${rate}/s a build; ` +
    `order (--order-seed ${order_seed}): warm-up ${plan.order.warmup.join('')}, timed ${plan.order.timed.join('')}`);
  const args: Args = lightPhaseArgs({ wallets, connections, seconds, rate, seed: 'ringbook-light-syscalls' });
  const gen = chooseGenerator(null);
  const ab = new AbServers(gen, args, { rate, seconds, connections, warmup_phases }, ADMIN_TOKEN);
  const runs: Record<AbSide, Counts[]> = { A: [], B: [] };
  try {
    const build = (name: AbSide, main_js: string): AbBuild => ({
      name, main_js, config: { diagnostics: { stage_timings: true }, metrics: { enabled: true, port: 0 } },
    });
    // Warm-ups: startPair's default, one plain light phase (the turns' plain phase without the /proc reads).
    const pair = await ab.startPair({ A: build('A', a_js), B: build('B', b_js) }, plan.timed_phases_per_side, plan.order);
    for (const [i, turn] of plan.turns.entries()) {
      const w: AbServer = pair[turn.side];
      const pid = w.server.pid;
      const phase = () => gen.runPhase({ port: w.server.port, lanes: w.signers.lanes, mode: 'open', rate, duration_ms: seconds * 1000 });
      const s0 = switches(pid);
      const t0 = cpuTicks(pid, pid);
      const plain = await phase();
      const t1 = cpuTicks(pid, pid);
      const s1 = switches(pid);
      const n0 = Math.max(1, plain.in_window.responses);
      let all = 0;
      const by_thread: Record<string, number> = {};
      for (const [tid, v] of s1) {
        const d = v - (s0.get(tid) ?? 0);
        all += d;
        const name = threadName(pid, tid);
        by_thread[name] = (by_thread[name] ?? 0) + d;
      }
      for (const k of Object.keys(by_thread)) by_thread[k] = r2((by_thread[k] ?? 0) / n0);
      const front = await straced(pid, false, phase, turn.trace_front_to_file && trace_file !== null ? path.resolve(trace_file) : null);
      const whole = await straced(pid, true, phase);
      const c: Counts = {
        front_user_us: r2(((t1[0] - t0[0]) * TICK_US) / n0), front_sys_us: r2(((t1[1] - t0[1]) * TICK_US) / n0),
        front_wakeups: r2(((s1.get(pid) ?? 0) - (s0.get(pid) ?? 0)) / n0),
        server_wakeups: r2(all / n0),
        wakeups_by_thread: by_thread,
        front_syscalls: perRequest(front.calls, Math.max(1, front.value.in_window.responses)),
        server_syscalls: perRequest(whole.calls, Math.max(1, whole.value.in_window.responses)),
      };
      runs[turn.side].push(c);
      console.log(`turn ${i + 1}/${plan.turns.length} ${turn.side} (its ${turn.own + 1}): ${JSON.stringify(c)}`);
    }
    await ab.stop();
    const out: Record<string, unknown> = {};
    for (const w of [pair.A, pair.B]) {
      const w_runs = runs[w.name];
      const med = (f: (c: Counts) => number): number => r2(medianMeanOfMiddleTwo(w_runs.map(f)));
      const medMap = (f: (c: Counts) => Record<string, number>): Record<string, number> => {
        const keys = new Set(w_runs.flatMap((c) => Object.keys(f(c))));
        return Object.fromEntries([...keys].map((k) => [k, med((c) => f(c)[k] ?? 0)]));
      };
      out[w.name] = {
        js: w.main_js, front_user_us_per_request: med((c) => c.front_user_us), front_sys_us_per_request: med((c) => c.front_sys_us),
        front_wakeups_per_request: med((c) => c.front_wakeups), server_wakeups_per_request: med((c) => c.server_wakeups),
        wakeups_per_request_by_thread: medMap((c) => c.wakeups_by_thread),
        front_syscalls_per_request: medMap((c) => c.front_syscalls), server_syscalls_per_request: medMap((c) => c.server_syscalls),
      };
      console.log(`${w.name}: ${JSON.stringify(out[w.name])}`);
    }
    console.log(JSON.stringify({ bench: 'light_syscalls', rate_per_s: rate, seconds, rounds,
      order_seed, warmup_order: plan.order.warmup.join(''), order: plan.order.timed.join(''), ...out }));
  } finally {
    await ab.dispose();
  }
}

main().catch((e: unknown) => {
  console.error('light_syscalls: failed:', e instanceof Error ? e.stack : e);
  process.exit(1);
});
