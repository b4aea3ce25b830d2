// The matcher thread at 1,000 requests/s (issue 11): where its CPU and wake-ups per request go, for
// two server builds side by side (alternated phases, as bench/light_ab.ts; the set-up both share
// is bench/load/ab_servers.ts). Per phase and per build, from /proc/<pid>/task/<matcher tid>: user
// and system CPU (stat utime/stime, clock ticks), running time (schedstat, ns), voluntary and involuntary
// context switches (status), each per answered request; the other threads' running time by role;
// and the client's p50/p99/p999. With --strace, one extra phase per build runs with
// `strace -c -p <matcher tid>` (that thread only) and reports its syscalls per request by name
// (strace slows the thread: counts only, not times).
//
//   npx tsc -p tsconfig.json && node dist/bench/matcher_light.js --server-a /work/wt/start/dist/src/main.js
//     --server-a F, --server-b F  compiled servers (default: this build's dist/src/main.js for both)
//     --rounds N (default 4), --seconds S (default 5), --rate R (default 1000), --strace (off)
//     --order-seed N which side's timed phase comes first: the phases run in light_ab's symmetric
//                    order (abRunOrder: set-up interleaved, warm-ups alternated, ABBA BAAB ...; h27l)
//     --wallets N (default 1000), --connections N (default 64)
//     --perf DIR  one extra phase per build under `perf record -e cpu-clock -g -t <matcher tid>`
//                 (servers run with --perf-basic-prof so JS frames have names), DIR/<A|B>.data and
//                 DIR/<A|B>.txt (perf report by symbol, on-CPU samples of that thread only)
// Ends with ONE JSON line {"bench":"matcher_light",...}.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Knobs } from './knobs.js';
import { lightKnobs, lightPhaseArgs, type Args } from './load/args.js';
import { chooseGenerator } from './load/native_generator.js';
import { randomInt } from 'node:crypto';
import { abFirstSide, abRunOrder, AbServers, type AbServer, type AbSide } from './load/ab_servers.js';
import { clockTicks, type ServerChild } from './load/server_child.js';
import { roleOfThread } from './load/thread_timeline.js';
import { medianMeanOfMiddleTwo } from './quantile.js';
import type { PhaseResult } from './load/lanes.js';
import { parseStraceTable } from './load/strace_table.js';

const ADMIN_TOKEN = 'matcher-light-admin-token';

interface ThreadSample {
  role: string;
  utime_ms: number;
  stime_ms: number;
  run_ms: number;
  voluntary: number;
  involuntary: number;
}

function sampleThreads(pid: number): Map<number, ThreadSample> {
  const out = new Map<number, ThreadSample>();
  const tick_ms = 1000 / clockTicks();
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      const base = `/proc/${pid}/task/${t}`;
      const stat = readFileSync(`${base}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).trim().split(' ');
      const comm = readFileSync(`${base}/comm`, 'utf8').trim();
      const status = readFileSync(`${base}/status`, 'utf8');
      const sched = readFileSync(`${base}/schedstat`, 'utf8').trim().split(/\s+/);
      const vol = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(status);
      const inv = /^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status);
      out.set(Number(t), {
        // The journal's LMDB storer (src/journal/wal_storer.ts, h22j) apart: the stores' CPU moved there.
        role: comm === 'rb-storer' ? 'storer' : roleOfThread(pid, Number(t), comm),
        utime_ms: Number(f[11]) * tick_ms, stime_ms: Number(f[12]) * tick_ms, run_ms: Number(sched[0]) / 1e6,
        voluntary: vol === null ? 0 : Number(vol[1]), involuntary: inv === null ? 0 : Number(inv[1]),
      });
    } catch {
      // thread gone
    }
  }
  return out;
}

/** The read model's last batch id (GET /admin/state): batches per phase, for CPU per batch. */
async function batchId(server: ServerChild): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${server.port}/admin/state`, { headers: { 'x-admin-token': ADMIN_TOKEN } });
  const body = (await res.json()) as { data?: { batch_id?: string } };
  return Number(body.data?.batch_id ?? NaN);
}

interface PhaseFigures {
  p50_ms: number;
  /** Batches per answered request (the matcher's). */
  batches_per_request: number;
  /** Matcher running µs per batch (schedstat). */
  matcher_run_us_per_batch: number;
  p99_ms: number;
  p999_ms: number;
  answered: number;
  /** Matcher thread, per answered request. */
  matcher_user_us: number;
  matcher_sys_us: number;
  matcher_run_us: number;
  matcher_wakeups: number;
  matcher_preempted: number;
  /** Running µs per request by role (schedstat). */
  run_us_by_role: Record<string, number>;
  wakeups_by_role: Record<string, number>;
}

function figures(r: PhaseResult, s0: Map<number, ThreadSample>, s1: Map<number, ThreadSample>, batches: number): PhaseFigures {
  const n = Math.max(1, r.in_window.responses);
  const run: Record<string, number> = {};
  const wake: Record<string, number> = {};
  let m: ThreadSample | null = null;
  let m0: ThreadSample | null = null;
  for (const [tid, b] of s1) {
    const a = s0.get(tid);
    if (a === undefined) continue;
    run[b.role] = (run[b.role] ?? 0) + (b.run_ms - a.run_ms);
    wake[b.role] = (wake[b.role] ?? 0) + (b.voluntary - a.voluntary);
    if (b.role === 'matcher') {
      m = b;
      m0 = a;
    }
  }
  const per = (x: number, unit = 1000): number => Math.round((x * unit * 100) / n) / 100;
  const pct = (p: number): number => (r.latency.totalCount === 0 ? 0 : Math.round(r.latency.getValueAtPercentile(p)) / 1000);
  return {
    p50_ms: pct(50), p99_ms: pct(99), p999_ms: pct(99.9), answered: n,
    batches_per_request: Math.round((batches * 1000) / n) / 1000,
    matcher_run_us_per_batch: m && m0 ? Math.round(((m.run_ms - m0.run_ms) * 1000 * 10) / Math.max(1, batches)) / 10 : 0,
    matcher_user_us: m && m0 ? per(m.utime_ms - m0.utime_ms) : 0,
    matcher_sys_us: m && m0 ? per(m.stime_ms - m0.stime_ms) : 0,
    matcher_run_us: m && m0 ? per(m.run_ms - m0.run_ms) : 0,
    matcher_wakeups: m && m0 ? per(m.voluntary - m0.voluntary, 1) : 0,
    matcher_preempted: m && m0 ? per(m.involuntary - m0.involuntary, 1) : 0,
    run_us_by_role: Object.fromEntries(Object.entries(run).map(([k, v]) => [k, per(v)])),
    wakeups_by_role: Object.fromEntries(Object.entries(wake).map(([k, v]) => [k, per(v, 1)])),
  };
}

function matcherTid(pid: number): number {
  for (const [tid, t] of sampleThreads(pid)) if (t.role === 'matcher') return tid;
  throw new Error(`no rb-matcher thread in process ${pid}`);
}

/** strace -c on one thread until stopped; resolves with its summary text. */
function straceThread(tid: number): { stop: () => Promise<string> } {
  const child = spawn('strace', ['-c', '-p', String(tid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let text = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (text += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    stop: async () => {
      child.kill('SIGINT');
      await exited;
      return text;
    },
  };
}

/**
 * The matcher thread's cpu-clock samples of a perf.data by what they served, from their call
 * chains (first match wins, in this order): the LMDB store of the write-ahead batches, the
 * write-ahead record's durable write in the kernel, its user-side preparation (encode, CRC,
 * header), the doorbell sleep (futex), the front's wake-up (eventfd write of the loop bell), the
 * engine's apply, the rest of the user side, the rest of the kernel.
 */
function perfShares(data: string): { samples: number; pct: Record<string, number> } {
  const script = spawnSync('perf', ['script', '-i', data, '-F', 'ip,sym', '--no-demangle'], { encoding: 'utf8', maxBuffer: 512 << 20 });
  const counts: Record<string, number> = {};
  let samples = 0;
  for (const block of script.stdout.split('\n\n')) {
    const frames = block.trim().split('\n').map((l) => l.trim()).filter((l) => l !== '');
    if (frames.length === 0) continue;
    samples++;
    const leaf_ip = BigInt('0x' + (frames[0].split(' ')[0] || '0'));
    const kernel = leaf_ip >= 0xffff800000000000n;
    const has = (re: RegExp): boolean => frames.some((f) => re.test(f));
    let part: string;
    if (has(/storeUnstored|storeOnce|transactionSync/)) part = 'lmdb_store';
    else if (kernel && has(/journal\/wal\.js/)) part = 'wal_write_kernel';
    else if (has(/journal\/wal\.js|journal_codec\.js|wal_store\.js|crc32/)) part = 'wal_write_user';
    else if (has(/futex_wait|__x64_sys_futex/)) part = 'doorbell_futex';
    else if (has(/eventfd_write|uv_async_send/)) part = 'front_wakeup';
    else if (has(/reserveAhead/)) part = 'reserve';
    else if (has(/applyBatch|engine\//)) part = kernel ? 'engine_kernel' : 'engine_apply';
    else part = kernel ? 'other_kernel' : 'other_user';
    counts[part] = (counts[part] ?? 0) + 1;
  }
  const pct: Record<string, number> = {};
  for (const [k, v] of Object.entries(counts).sort((a, b) => b[1] - a[1])) pct[k] = Math.round((1000 * v) / Math.max(1, samples)) / 10;
  return { samples, pct };
}

interface Way extends AbServer {
  phases: PhaseFigures[];
  syscalls_per_request: Record<string, number> | null;
}

async function main(): Promise<void> {
  const knobs = new Knobs();
  const here = path.dirname(fileURLToPath(import.meta.url));
  const own = path.resolve(here, '../src/main.js');
  const { a_js, b_js, rounds, seconds, rate, wallets, connections, warmup_phases } = lightKnobs(knobs, own, 4);
  const with_strace = knobs.flag('strace');
  const perf_dir = knobs.optionalString('perf') ?? null;
  const order_seed = knobs.optionalString('order-seed') === undefined ? randomInt(0x1_0000_0000) : knobs.number('order-seed', 0, 0, 0xffff_ffff);
  knobs.finish();
  const order = abRunOrder(rounds, warmup_phases, abFirstSide(order_seed));
  const args: Args = lightPhaseArgs({ wallets, connections, seconds, rate, seed: 'ringbook-matcher-light' });
  console.log(`matcher_light: ${new Date().toISOString()}, ${os.availableParallelism()} cores, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`  A ${a_js}\n  B ${b_js}\n  ${rounds} rounds x ${seconds} s at ${rate}/s${with_strace ? ', then one strace phase each' : ''}`);
  console.log(`  order (--order-seed ${order_seed}): warm-up ${order.warmup.join('')}, timed ${order.timed.join('')}`);
  const gen = chooseGenerator(null);
  const ab = new AbServers(gen, args, { rate, seconds, connections, warmup_phases }, ADMIN_TOKEN);
  const phases = rounds + (with_strace ? 1 : 0) + (perf_dir !== null ? 1 : 0);
  const ways: Way[] = [];
  try {
    const node_flags = perf_dir !== null ? ['--perf-basic-prof'] : [];
    const pair = await ab.startPair({ A: { name: 'A', main_js: a_js, node_flags }, B: { name: 'B', main_js: b_js, node_flags } }, phases, order);
    const by_side: Record<AbSide, Way> = { A: { ...pair.A, phases: [], syscalls_per_request: null }, B: { ...pair.B, phases: [], syscalls_per_request: null } };
    ways.push(by_side.A, by_side.B);
    for (const [i, side] of order.timed.entries()) {
      const w = by_side[side];
      const b0 = await batchId(w.server);
      const s0 = sampleThreads(w.server.pid);
      const result = await gen.runPhase({ port: w.server.port, lanes: w.signers.lanes, mode: 'open', rate, duration_ms: seconds * 1000 });
      const s1 = sampleThreads(w.server.pid);
      const f = figures(result, s0, s1, (await batchId(w.server)) - b0);
      w.phases.push(f);
      console.log(`  phase ${i + 1}/${order.timed.length} ${w.name} (its ${w.phases.length}): p50 ${f.p50_ms} ms, p99 ${f.p99_ms} ms, p999 ${f.p999_ms} ms; ${f.batches_per_request} batches/request, matcher ${f.matcher_run_us_per_batch} us/batch; per request: user ${f.matcher_user_us} us, sys ${f.matcher_sys_us} us, ` +
        `run ${f.matcher_run_us} us, wake-ups ${f.matcher_wakeups}, preempted ${f.matcher_preempted}; run us/request ${JSON.stringify(f.run_us_by_role)}`);
    }
    if (with_strace) {
      for (const w of ways) {
        const tracer = straceThread(matcherTid(w.server.pid));
        await new Promise((resolve) => setTimeout(resolve, 300)); // attached
        const result = await gen.runPhase({ port: w.server.port, lanes: w.signers.lanes, mode: 'open', rate, duration_ms: seconds * 1000 });
        const text = await tracer.stop();
        const n = Math.max(1, result.in_window.responses);
        const calls = parseStraceTable(text);
        w.syscalls_per_request = Object.fromEntries(Object.entries(calls).map(([k, v]) => [k, Math.round((v * 1000) / n) / 1000]));
        console.log(`  strace ${w.name} (${n} answered; counts include the ~0.3 s before and after the window):\n${text.split('\n').map((l) => '    ' + l).join('\n')}`);
      }
    }
    if (perf_dir !== null) {
      mkdirSync(perf_dir, { recursive: true });
      for (const w of ways) {
        const data = path.join(perf_dir, `${w.name}.data`);
        const rec = spawn('perf', ['record', '-e', 'cpu-clock', '-e', 'block:block_rq_issue', '-F', '4999', '-g', '-t', String(matcherTid(w.server.pid)), '-o', data], { stdio: 'ignore' });
        const done = new Promise<void>((resolve) => rec.once('exit', () => resolve()));
        await new Promise((resolve) => setTimeout(resolve, 300));
        const result = await gen.runPhase({ port: w.server.port, lanes: w.signers.lanes, mode: 'open', rate, duration_ms: seconds * 1000 });
        rec.kill('SIGINT');
        await done;
        const report = spawnSync('perf', ['report', '-i', data, '--no-children', '--sort', 'sym', '--stdio', '-g', 'none', '--percent-limit', '0.5'], { encoding: 'utf8', maxBuffer: 64 << 20 });
        // The thread's own block requests (the write-ahead record, its flush, inode writes, LMDB's)
        // by kind (rwbs) and size: perf script's tracepoint lines.
        const script = spawnSync('perf', ['script', '-i', data, '-F', 'event,trace'], { encoding: 'utf8', maxBuffer: 256 << 20 });
        const kinds: Record<string, number> = {};
        for (const line of script.stdout.split('\n')) {
          const m = /block_rq_issue:\s+\S+\s+(\w+)\s+(\d+)\s+\(/.exec(line);
          if (m !== null) kinds[`${m[1]} ${m[2]}B`] = (kinds[`${m[1]} ${m[2]}B`] ?? 0) + 1;
        }
        const n = Math.max(1, result.in_window.responses);
        const per = Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, Math.round((v * 1000) / n) / 1000]));
        const shares = perfShares(data);
        console.log(`  the matcher thread's on-CPU samples by part (${w.name}, % of ${shares.samples}): ${JSON.stringify(shares.pct)}`);
        console.log(`  block requests issued by the matcher thread per answered request (${w.name}): ${JSON.stringify(per)}`);
        writeFileSync(path.join(perf_dir, `${w.name}.txt`), `answered ${result.in_window.responses}\nblock requests per request ${JSON.stringify(per)}\n` + report.stdout);
        console.log(`  perf ${w.name}: ${path.join(perf_dir, `${w.name}.txt`)} (${result.in_window.responses} answered)`);
      }
    }
    await ab.stop();
    const out: Record<string, unknown> = {};
    for (const w of ways) {
      const med = (f: (x: PhaseFigures) => number): number => Math.round(medianMeanOfMiddleTwo(w.phases.map(f)) * 100) / 100;
      const roles = new Set(w.phases.flatMap((p) => Object.keys(p.run_us_by_role)));
      const summary = {
        p50_ms: med((x) => x.p50_ms), p99_ms: med((x) => x.p99_ms), p999_ms: med((x) => x.p999_ms),
        batches_per_request: med((x) => x.batches_per_request), matcher_run_us_per_batch: med((x) => x.matcher_run_us_per_batch),
        matcher_user_us: med((x) => x.matcher_user_us), matcher_sys_us: med((x) => x.matcher_sys_us), matcher_run_us: med((x) => x.matcher_run_us),
        matcher_wakeups: med((x) => x.matcher_wakeups), matcher_preempted: med((x) => x.matcher_preempted),
        run_us_by_role: Object.fromEntries([...roles].map((k) => [k, med((x) => x.run_us_by_role[k] ?? 0)])),
        wakeups_by_role: Object.fromEntries([...roles].map((k) => [k, med((x) => x.wakeups_by_role[k] ?? 0)])),
        matcher_syscalls_per_request: w.syscalls_per_request,
      };
      out[w.name] = summary;
      console.log(`${w.name} medians over ${w.phases.length} phases: ${JSON.stringify(summary)}`);
    }
    console.log(JSON.stringify({ bench: 'matcher_light', rate_per_s: rate, seconds, rounds, server_a: a_js, server_b: b_js, order_seed, order: order.timed.join(''), ...out }));
  } finally {
    await ab.dispose();
  }
}

main().catch((e: unknown) => {
  console.error('matcher_light: failed:', e instanceof Error ? e.stack : e);
  process.exit(1);
});
