// Syscalls and wake-ups per request at a light 1,000 requests/s, two server builds side by side
// (issue 11): counts that do not depend on the machine's noise, unlike CPU time. Each server gets
// its own funded wallets and pre-signed lanes (as bench/light_ab.ts); then, `rounds` times, per
// build (A B, then B A): a plain light phase that reads the voluntary context switches of every
// server thread before and after (/proc/<pid>/task/<tid>/status), a phase under `strace -c` on
// the front thread alone (the server's main thread) and a phase under `strace -f -c` on the whole
// server. strace slows the traced threads, so the traced phases' CPU and latency mean nothing;
// their counts per answered request are what is reported (medians over rounds).
//
//   npx tsc -p tsconfig.json && node dist/bench/light_syscalls.js --server-a F --server-b F
//     --rounds N (default 3), --seconds S (default 5), --rate R (default 1000), --wallets, --connections
// Ends with ONE JSON line {"bench":"light_syscalls",...}.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Knobs } from './knobs.js';
import { lightKnobs, lightPhaseArgs, type Args } from './load/args.js';
import { chooseGenerator } from './load/native_generator.js';
import { depositLanes } from './load/phases.js';
import { parseStraceTable } from './load/strace_table.js';
import { onSignalCleanup, removeDir, startServer, type ServerChild } from './load/server_child.js';
import { SIGN_BUDGET_MS, Signers } from './load/signers.js';
import { medianMeanOfMiddleTwo } from './quantile.js';

const ADMIN_TOKEN = 'light-syscalls-admin-token';
const BIG = 1_000_000_000;

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
  knobs.finish();
  const args: Args = lightPhaseArgs({ wallets, connections, seconds, rate, seed: 'ringbook-light-syscalls' });
  const gen = chooseGenerator(null);
  const ways: { name: 'A' | 'B'; js: string; server: ServerChild; signers: Signers; runs: Counts[] }[] = [];
  const servers: ServerChild[] = [];
  let stopped: Promise<void> | null = null;
  const stopAll = (): Promise<void> => stopped ??= (async () => {
    for (const w of ways) await w.signers.close();
    for (const s of servers) await s.stop();
  })();
  onSignalCleanup(stopAll);
  try {
    for (const [name, js] of [['A', a_js], ['B', b_js]] as const) {
      const server = await startServer({
        main_js: js, admin_token: ADMIN_TOKEN,
        config: {
          rate_limits: { orders_per_wallet: BIG, cancels_per_wallet: BIG, deposits_per_wallet: BIG, withdrawals_per_wallet: BIG, gets_per_ip: BIG },
          diagnostics: { stage_timings: true }, metrics: { enabled: true, port: 0 },
        },
        node_flags: [],
      });
      servers.push(server);
      const signers = new Signers(args);
      ways.push({ name, js, server, signers, runs: [] });
      const addresses = await signers.ready;
      await gen.runPhase({ port: server.port, lanes: depositLanes(addresses, connections, ADMIN_TOKEN), mode: 'closed', duration_ms: Infinity });
      await signers.ensurePerLane(Math.ceil((rate * seconds * (3 * rounds + warmup_phases)) / connections) + 4, SIGN_BUDGET_MS * 3);
      for (let w = 0; w < warmup_phases; w++) {
        await gen.runPhase({ port: server.port, lanes: signers.lanes, mode: 'open', rate, duration_ms: seconds * 1000 });
      }
    }
    for (let r = 0; r < rounds; r++) {
      for (const w of r % 2 === 0 ? ways : [...ways].reverse()) {
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
        const front = await straced(pid, false, phase, trace_file !== null && w.name === 'B' && r === 0 ? path.resolve(trace_file) : null);
        const whole = await straced(pid, true, phase);
        const c: Counts = {
          front_user_us: r2(((t1[0] - t0[0]) * TICK_US) / n0), front_sys_us: r2(((t1[1] - t0[1]) * TICK_US) / n0),
          front_wakeups: r2(((s1.get(pid) ?? 0) - (s0.get(pid) ?? 0)) / n0),
          server_wakeups: r2(all / n0),
          wakeups_by_thread: by_thread,
          front_syscalls: perRequest(front.calls, Math.max(1, front.value.in_window.responses)),
          server_syscalls: perRequest(whole.calls, Math.max(1, whole.value.in_window.responses)),
        };
        w.runs.push(c);
        console.log(`round ${r + 1} ${w.name}: ${JSON.stringify(c)}`);
      }
    }
    await stopAll();
    const out: Record<string, unknown> = {};
    for (const w of ways) {
      const med = (f: (c: Counts) => number): number => r2(medianMeanOfMiddleTwo(w.runs.map(f)));
      const medMap = (f: (c: Counts) => Record<string, number>): Record<string, number> => {
        const keys = new Set(w.runs.flatMap((c) => Object.keys(f(c))));
        return Object.fromEntries([...keys].map((k) => [k, med((c) => f(c)[k] ?? 0)]));
      };
      out[w.name] = {
        js: w.js, front_user_us_per_request: med((c) => c.front_user_us), front_sys_us_per_request: med((c) => c.front_sys_us),
        front_wakeups_per_request: med((c) => c.front_wakeups), server_wakeups_per_request: med((c) => c.server_wakeups),
        wakeups_per_request_by_thread: medMap((c) => c.wakeups_by_thread),
        front_syscalls_per_request: medMap((c) => c.front_syscalls), server_syscalls_per_request: medMap((c) => c.server_syscalls),
      };
      console.log(`${w.name}: ${JSON.stringify(out[w.name])}`);
    }
    console.log(JSON.stringify({ bench: 'light_syscalls', rate_per_s: rate, seconds, rounds, ...out }));
  } finally {
    await stopAll().catch(() => undefined);
    for (const s of servers) removeDir(s.dir);
  }
}

main().catch((e: unknown) => {
  console.error('light_syscalls: failed:', e instanceof Error ? e.stack : e);
  process.exit(1);
});
