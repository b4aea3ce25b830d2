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
//   --generator G      native (native-bench/build/loadgen, the default when built) or node
//   --matcher-cpu N    run the server with matcher.cpu N (pin the matcher thread; default off)
//   --background P     run the server with threads.background P, "nice,policy" (e.g. "10,batch";
//                      "0,other": the default priority; absent: the server's default)
//   --verify-steal-after-us N  run the server with verify.steal_after_us N (0: the front never checks
//                      a waiting verify task itself; absent: the server's default)
//   --verify-task-items N  run the server with verify.task_items_max N (absent: the server's default)
//   --metrics-pairs N  metrics on/off comparison: N pairs of closed-loop runs (default 2; 0: skip)
//   --metrics-seconds S  length of each of those runs (default 5)
//   --server-flags=F   extra node flags for the server, space-separated (e.g. --server-flags="--trace-gc":
//                      a value that starts with -- takes the = form; BENCH_SERVER_FLAGS works too)
//   --server-log FILE  copy the server's stdout to FILE (with --trace-gc: every GC pause, timed)
//   --server-main F    run this compiled server instead of this build's dist/src/main.js (an A/B
//                      of two builds with one measuring client: e.g. /work/main/dist/src/main.js)
// Phases: start server -> fund wallets (POST /deposit, admin token) -> measure the verify stage
// -> pre-sign -> warm-up -> max throughput (closed loop) x runs -> fixed rate (open loop)
// -> metrics on/off (closed loop, A B B A: bench/load/metrics_cost.ts) -> 1,000 requests/s (open
// loop) -> half the max rate (open loop). The server runs with metrics on (the default) and
// diagnostics.stage_timings on, and the 1,000/s phase's latency per stage is read from its rows.
// Signing happens only between timed phases (in worker threads, sized from the measured rates);
// the timed phases only write pre-built bytes (bench/load/lanes.ts explains the client: one
// request in flight per connection because the server's uWS drops pipelined async requests).
// Server CPU comes from /proc/<pid>/task/*/stat. Ends with one JSON line. Bounded: ~1-2 minutes.
// Results and what limits them: docs/benchmarks.md, section "load".
import { Worker } from 'node:worker_threads';
import { THREAD_NAMES } from '../src/util/thread_name.js';
import { THREAD_BACKGROUND_DEFAULT, threadPriority } from '../src/config.js';
import { STEAL_AFTER_US_DEFAULT, STEAL_AFTER_US_MAX, TASK_SIZE_DEFAULT, TASK_SIZE_MAX } from '../src/auth/verify_limits.js';
import { daLag, type DaLag } from './load/da_lag.js';
import type { ThreadPriority } from '../src/util/thread_priority.js';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { eip191Hash } from '../src/auth/eip191.js';
import { orderJsonMessage } from '../src/auth/messages.js';
import {
  DEFAULT_MIX, DEPOSIT_ETH, DEPOSIT_USDC, KIND_DEPOSIT, MARKET_ID, MID_UNITS, TICK_UNITS, LOT_UNITS,
  depositRequest, laneWallets, loadNativeSecp256k1, walletKey, type NativeSecp256k1, type WalletKey,
} from './load/flow.js';
import { Lane, textSegment, type Histogram, type PhaseResult, type Segment } from './load/lanes.js';
import { chooseGenerator, type Generator, type GeneratorName } from './load/native_generator.js';
import { cpuDelta, onSignalCleanup, removeDir, sampleMachine, sampleProc, startServer, type CpuDelta, type ServerChild } from './load/server_child.js';
import { Knobs } from './knobs.js';
import { costFigures, costLines, costOrder, metricsPortOf, setRecording, type CostRun } from './load/metrics_cost.js';
import { summarizeProfileDir, type ThreadProfile } from './load/profile.js';
import type { SignReply, SignerInit, SignerReady } from './load/signer_worker.js';
import {
  ceilingFigures, ceilingLines, epochNowMs, latencyFigures, latencyLines, LIGHT_RATE_PER_S, readStageRows, stageFigures, stageLines,
} from './load/targets.js';
import { tailFigures, tailLines } from './load/tail.js';

const TARGET_ORDERS_PER_S = 15_000;
const TARGET_P99_MS = 5;
/** Most wall time one pre-signing top-up may take (keeps the whole bench near 2 minutes). */
const SIGN_BUDGET_MS = 10_000;

interface Args {
  wallets: number;
  connections: number;
  seconds: number;
  runs: number;
  rate: number;
  signers: number;
  warmup_s: number;
  profile: boolean;
  server_flags: string[];
  server_log: string | null;
  /** null: this build's dist/src/main.js. */
  server_main: string | null;
  seed: string;
  /** null: native when built, else node. */
  generator: GeneratorName | null;
  /** config matcher.cpu for the server (null: no pinning). */
  matcher_cpu: number | null;
  /** config threads.background for the server (null: the server's default). */
  background: ThreadPriority | null;
  /** config verify.steal_after_us and verify.task_items_max for the server (null: the server's default). */
  verify_steal_after_us: number | null;
  verify_task_items: number | null;
  metrics_pairs: number;
  metrics_seconds: number;
}

/** bench/knobs.ts: `--wallets N` or BENCH_WALLETS=N, and so on. */
function parseArgs(): Args {
  const knobs = new Knobs();
  const num = { integer: false };
  const a: Args = {
    wallets: knobs.number('wallets', 4000, 16, 100_000),
    connections: knobs.number('connections', 256, 1, 4096),
    seconds: knobs.number('seconds', 10, 0.5, 60, num),
    runs: knobs.number('runs', 3, 1, 9),
    rate: knobs.number('rate', 5000, 1, 200_000, num),
    signers: knobs.number('signers', Math.max(1, os.availableParallelism()), 1, 64),
    warmup_s: knobs.number('warmup', 1.5, 0, 30, num),
    profile: knobs.flag('profile'),
    server_flags: (knobs.optionalString('server-flags') ?? '').split(' ').filter((f) => f !== ''),
    server_log: knobs.optionalString('server-log') ?? null,
    server_main: knobs.optionalString('server-main') ?? null,
    seed: knobs.string('seed', 'ringbook-load-1'),
    generator: generatorArg(knobs.optionalString('generator')),
    matcher_cpu: knobs.optionalString('matcher-cpu') === undefined ? null
      : knobs.number('matcher-cpu', 0, 0, os.availableParallelism() - 1),
    background: backgroundArg(knobs.optionalString('background')),
    verify_steal_after_us: knobs.optionalString('verify-steal-after-us') === undefined ? null
      : knobs.number('verify-steal-after-us', STEAL_AFTER_US_DEFAULT, 0, STEAL_AFTER_US_MAX),
    verify_task_items: knobs.optionalString('verify-task-items') === undefined ? null
      : knobs.number('verify-task-items', TASK_SIZE_DEFAULT, 1, TASK_SIZE_MAX),
    metrics_pairs: knobs.number('metrics-pairs', 2, 0, 10),
    metrics_seconds: knobs.number('metrics-seconds', 5, 0.5, 60, num),
  };
  knobs.finish();
  if (a.connections > a.wallets) throw new RangeError('--connections must not exceed --wallets (each lane owns its wallets)');
  return a;
}

/** `--background nice,policy` (checked by the server's own rule, config.ts threadPriority). */
function backgroundArg(v: string | undefined): ThreadPriority | null {
  if (v === undefined) return null;
  const [nice, policy] = v.split(',');
  return threadPriority({ nice: Number(nice), policy: policy ?? 'other' }, '--background', THREAD_BACKGROUND_DEFAULT);
}

/** undefined (not given): null, native when built, else node. */
function generatorArg(v: string | undefined): GeneratorName | null {
  if (v === undefined) return null;
  if (v === 'native' || v === 'node') return v;
  throw new RangeError(`--generator must be native or node, got ${v}`);
}

// ---- small helpers ----

const ms = (us: number): number => Math.round(us) / 1000;
const f1 = (x: number): string => x.toFixed(1);
const int = (x: number): string => Math.round(x).toLocaleString('en-US');

function pct(h: Histogram, p: number): number {
  return h.totalCount === 0 ? 0 : ms(h.getValueAtPercentile(p));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function mapText(m: Map<string, number>): string {
  if (m.size === 0) return 'none';
  return [...m.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ');
}

function mergeRejects(results: PhaseResult[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of results) {
    for (const st of [r.stats.order, r.stats.cancel]) {
      for (const [k, v] of st.rejects) out.set(k, (out.get(k) ?? 0) + v);
    }
  }
  return out;
}

/** Load average and CPU pressure: how much of the machine other processes were using. */
function machineLoad(): string {
  let psi = '';
  try {
    const m = /avg10=([0-9.]+) avg60=([0-9.]+)/.exec(readFileSync('/proc/pressure/cpu', 'utf8'));
    if (m) psi = `, CPU pressure (some) avg10 ${m[1]}% avg60 ${m[2]}%`;
  } catch {
    // no PSI
  }
  return `load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}${psi}`;
}

// ---- the verify stage, measured in this process on one thread ----

interface VerifyStage {
  /** Per CPU-second of one thread (process CPU time: robust to other load on the machine). */
  full_per_cpu_s: number;
  recover_per_cpu_s: number;
  sign_per_cpu_s: number;
  /** Per wall second, as it ran (what this thread actually got of the machine). */
  full_per_wall_s: number;
  sign_per_wall_s: number;
}

function measureVerifyStage(secp: NativeSecp256k1, keys: WalletKey[], budget_ms: number): VerifyStage {
  const n = keys.length;
  const items: { message: string; sig: Uint8Array; recid: number; address: string; hash: Uint8Array }[] = [];
  for (let i = 0; i < n; i++) {
    const message = orderJsonMessage({
      market_id: MARKET_ID, side: i % 2 ? 'bid' : 'ask', price: MID_UNITS + (i % 7) * TICK_UNITS,
      quantity: (1 + i) * LOT_UNITS, order_type: 'limit', time_in_force: 'gtc', nonce: 1_000_000 + i,
    });
    const hash = eip191Hash(message);
    const s = secp.ecdsaSign(hash, keys[i].priv);
    items.push({ message, sig: s.signature, recid: s.recid, address: keys[i].address, hash });
  }
  const pub = new Uint8Array(65);
  // What the server's verify worker does per item: EIP-191 hash, recover, keccak to an address.
  const full = (it: (typeof items)[number]): boolean => {
    const h = eip191Hash(it.message);
    secp.ecdsaRecover(it.sig, it.recid, h, false, pub);
    const a = keccak_256(pub.subarray(1, 65)).subarray(12, 32);
    return Buffer.from(a).toString('hex') === it.address.slice(2);
  };
  for (let i = 0; i < 64; i++) if (!full(items[i % n])) throw new Error('verify stage self-check failed');
  /** [per CPU second, per wall second] of `fn` run for `share_ms` of wall time. */
  const loop = (fn: (i: number) => void, share_ms: number): [number, number] => {
    let count = 0;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let t = t0;
    while (t - t0 < share_ms) {
      for (let j = 0; j < 32; j++) fn(count++);
      t = performance.now();
    }
    const c = process.cpuUsage(c0);
    const cpu_ms = Math.max(1, (c.user + c.system) / 1000);
    return [(count * 1000) / cpu_ms, (count * 1000) / (t - t0)];
  };
  const [full_per_cpu_s, full_per_wall_s] = loop((i) => void full(items[i % n]), budget_ms * 0.5);
  const [recover_per_cpu_s] = loop((i) => void secp.ecdsaRecover(items[i % n].sig, items[i % n].recid, items[i % n].hash, false, pub), budget_ms * 0.25);
  const [sign_per_cpu_s, sign_per_wall_s] = loop((i) => void secp.ecdsaSign(items[i % n].hash, keys[i % n].priv), budget_ms * 0.25);
  return { full_per_cpu_s, recover_per_cpu_s, sign_per_cpu_s, full_per_wall_s, sign_per_wall_s };
}

// ---- signing pool ----

class Signers {
  private readonly workers: Worker[] = [];
  private readonly stop = new SharedArrayBuffer(4);
  private busy: Promise<unknown> = Promise.resolve();
  /** Resolves with every wallet's address once each worker derived its keys. */
  readonly ready: Promise<string[]>;
  readonly lanes: Lane[];
  private readonly lane_wallets: number[];
  signed = 0;
  sign_wall_ms = 0;

  constructor(args: Args) {
    this.lanes = Array.from({ length: args.connections }, (_, i) => new Lane(i));
    this.lane_wallets = this.lanes.map((l) => laneWallets(l.id, args.connections, args.wallets).length);
    const file = new URL('./load/signer_worker.js', import.meta.url);
    const readies: Promise<SignerReady>[] = [];
    for (let k = 0; k < args.signers; k++) {
      const lanes = this.lanes.filter((l) => l.id % args.signers === k).map((l) => l.id);
      if (lanes.length === 0) continue;
      const init: SignerInit = { stop: this.stop, seed: args.seed, lanes, lane_count: args.connections, wallets: args.wallets, mix: DEFAULT_MIX };
      const w = new Worker(file, { workerData: init });
      w.unref();
      this.workers.push(w);
      readies.push(Signers.reply<SignerReady>(w));
    }
    this.ready = Promise.all(readies).then((rs) => {
      const addresses: string[] = new Array(args.wallets);
      for (const r of rs) for (const x of r.wallets) addresses[x.index] = x.address;
      for (let i = 0; i < args.wallets; i++) if (addresses[i] === undefined) throw new Error(`no signer owns wallet ${i}`);
      return addresses;
    });
  }

  private static reply<T>(w: Worker, msg?: unknown): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const onMsg = (m: T): void => {
        w.off('error', onErr);
        resolve(m);
      };
      const onErr = (e: Error): void => {
        w.off('message', onMsg);
        reject(e);
      };
      w.once('message', onMsg);
      w.once('error', onErr);
      if (msg !== undefined) w.postMessage(msg);
    });
  }

  /** Requests signed per wall second so far (0 before the first chunk). */
  rate(): number {
    return this.sign_wall_ms > 0 ? (this.signed * 1000) / this.sign_wall_ms : 0;
  }

  remaining(): number {
    return this.lanes.reduce((s, l) => s + l.remaining, 0);
  }

  /** Whole rounds (one request per wallet) still needed for every lane to hold `per_lane` requests. */
  private roundsShort(per_lane: number): number {
    let rounds = 0;
    this.lanes.forEach((l, i) => {
      const short = per_lane - l.remaining;
      if (short > 0) rounds = Math.max(rounds, Math.ceil(short / this.lane_wallets[i]));
    });
    return rounds;
  }

  /**
   * Signs rounds until every lane holds at least `per_lane` requests or `budget_ms` of signing
   * passed (chunks of ~2 s, so the budget holds on a slow or busy machine). Returns how many
   * requests were signed.
   */
  async ensurePerLane(per_lane: number, budget_ms: number): Promise<number> {
    const t0 = performance.now();
    const wallets = this.lane_wallets.reduce((a, b) => a + b, 0);
    let n = 0;
    for (;;) {
      const short = this.roundsShort(per_lane);
      const left_ms = budget_ms - (performance.now() - t0);
      if (short === 0 || left_ms <= 0) break;
      const rate = this.rate();
      const chunk = rate > 0 ? Math.max(1, Math.floor((rate * Math.min(2000, left_ms)) / 1000 / wallets)) : 1;
      n += await this.signRounds(Math.min(chunk, short));
    }
    return n;
  }

  private async signRounds(rounds: number): Promise<number> {
    const t0 = performance.now();
    const all = Promise.all(this.workers.map((w) => Signers.reply<SignReply>(w, { rounds })));
    this.busy = all.catch(() => undefined);
    const replies = await all;
    let n = 0;
    for (const r of replies) {
      for (const c of r.chunks) {
        const seg: Segment = { buf: Buffer.from(c.buf), offsets: c.offsets, kinds: c.kinds };
        this.lanes[c.lane].add(seg);
      }
      n += r.signed;
    }
    this.signed += n;
    this.sign_wall_ms += performance.now() - t0;
    return n;
  }

  /** Stops a running chunk, waits for the workers to leave native code, then ends them. */
  async close(): Promise<void> {
    Atomics.store(new Int32Array(this.stop), 0, 1);
    await Promise.race([this.busy, new Promise((r) => setTimeout(r, 1500).unref())]);
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

// ---- funding ----

function depositLanes(addresses: string[], connections: number, admin_token: string): Lane[] {
  const lanes = Array.from({ length: connections }, (_, i) => new Lane(i));
  const per: string[][] = lanes.map(() => []);
  addresses.forEach((a, i) => {
    per[i % connections].push(depositRequest(a, 'USDC', DEPOSIT_USDC, admin_token));
    per[i % connections].push(depositRequest(a, 'ETH', DEPOSIT_ETH, admin_token));
  });
  lanes.forEach((l, i) => l.add(textSegment(per[i], new Uint8Array(per[i].length).fill(KIND_DEPOSIT))));
  return lanes;
}

// ---- per-thread CPU ----

interface PhaseCpu {
  server: CpuDelta | null;
  generator: CpuDelta | null;
  /** Whole machine busy, % of one core (all processes); minus server and generator = others. */
  machine_pct: number | null;
}

/**
 * The generator's CPU over a phase: this process's, or what the native generator measured of
 * itself (getrusage over its connects, window and drain), spread over the same wall time.
 */
function generatorCpu(value: PhaseResult, own: CpuDelta | null, wall_ms: number): CpuDelta | null {
  if (value.generator_cpu_ms === undefined) return own;
  return { wall_ms, cpu_ms: value.generator_cpu_ms, pct: (100 * value.generator_cpu_ms) / wall_ms, threads: [] };
}

/** Generator CPU per answered request of a phase (us), whichever generator ran it. */
function generatorUsPerRequest(r: PhaseResult, cpu: PhaseCpu): number {
  return ((cpu.generator?.cpu_ms ?? 0) * 1000) / Math.max(1, r.in_window.responses);
}

async function measured<T extends PhaseResult>(server: ServerChild, fn: () => Promise<T>): Promise<{ value: T; cpu: PhaseCpu }> {
  const m0 = sampleMachine();
  const s0 = sampleProc(server.pid);
  const g0 = sampleProc(process.pid, false);
  const value = await fn();
  const s1 = sampleProc(server.pid);
  const g1 = sampleProc(process.pid, false);
  const m1 = sampleMachine();
  const server_cpu = cpuDelta(s0, s1);
  const machine_pct = m0 && m1 && server_cpu ? (100 * (m1.busy_ms - m0.busy_ms)) / server_cpu.wall_ms : null;
  const generator = generatorCpu(value, cpuDelta(g0, g1), server_cpu?.wall_ms ?? 1);
  return { value, cpu: { server: server_cpu, generator, machine_pct } };
}

/** "server 95% + generator 30% + other processes 60% of 2 cores (200%)". */
function shareText(c: PhaseCpu): string {
  const sv = c.server?.pct ?? 0;
  const g = c.generator?.pct ?? 0;
  const others = c.machine_pct === null ? null : Math.max(0, c.machine_pct - sv - g);
  return `server ${f1(sv)}% + generator ${f1(g)}%` + (others === null ? '' : ` + other processes ${f1(others)}%`) +
    ` of ${os.availableParallelism() * 100}% (${os.availableParallelism()} cores)`;
}

/**
 * Roles of the server's threads. The main thread is tid == pid; the matcher and the DA worker name
 * themselves (src/util/thread_name.ts: `rb-matcher`, `rb-da`); the verify pool's threads (Piscina,
 * cores - 1 by default) are created last, so they are the last `verify_threads` threads still
 * called "node" (the V8 platform's and libuv's pool threads, GC helpers and LMDB commits among
 * them, were created before and stay "other"). The label says "?" unless the activity agrees:
 * verify workers are busy under signed load and idle while only unsigned deposits flow.
 */
function inferRoles(pid: number, verify_threads: number, funding: CpuDelta | null, loaded: CpuDelta | null): Map<number, string> {
  const roles = new Map<number, string>();
  roles.set(pid, 'main (uWS front + gateway)');
  if (loaded === null) return roles;
  for (const t of loaded.threads) {
    if (t.comm === THREAD_NAMES.matcher) roles.set(t.tid, 'matcher');
    else if (t.comm === THREAD_NAMES.da) roles.set(t.tid, 'DA worker');
    else if (t.comm === THREAD_NAMES.verify) roles.set(t.tid, 'verify worker');
  }
  // A build that names its verify workers (rb-verify) needs no guess; an older one (an A/B through
  // --server-main) leaves them "node", and they are the last threads created.
  if ([...roles.values()].includes('verify worker')) return roles;
  const fund = new Map((funding?.threads ?? []).map((t) => [t.tid, t.pct] as const));
  // Sorted by (start, tid); only threads still called "node" (with --cpu-prof each isolate also
  // gets a "v8:ProfEvntProc" thread).
  const order = loaded.threads.filter((t) => t.tid !== pid && t.comm === 'node');
  const verify = order.slice(Math.max(0, order.length - verify_threads));
  if (verify.length === verify_threads) {
    const consistent = verify.every((t) => t.pct >= 2 && (fund.get(t.tid) ?? 0) <= Math.max(2, t.pct / 4));
    for (const t of verify) roles.set(t.tid, consistent ? 'verify worker (by creation order)' : 'verify? (creation order)');
  }
  return roles;
}

function threadTable(label: string, d: CpuDelta | null, roles: Map<number, string>, min_pct = 1): string[] {
  if (d === null) return [`  ${label}: (no /proc sample)`];
  const lines = [`  ${label}: server ${f1(d.pct)}% of one core over ${f1(d.wall_ms / 1000)} s`];
  let rest = 0;
  for (const t of d.threads) {
    if (t.pct < min_pct && !roles.has(t.tid)) {
      rest += t.pct;
      continue;
    }
    lines.push(`    tid ${t.tid} comm=${t.comm} ${(roles.get(t.tid) ?? 'other').padEnd(28)} ${f1(t.pct).padStart(6)}%`);
  }
  if (rest > 0) lines.push(`    (other threads, each < ${min_pct}%: ${f1(rest)}% together)`);
  return lines;
}

/** µs of server CPU per answered request by thread role (rounded to 0.1). */
function usPerRequestByRole(d: CpuDelta | null, roles: Map<number, string>, answered: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(roleCpu(d, roles))) out[k] = Math.round((v * 10000) / answered) / 10;
  return out;
}

function roleCpu(d: CpuDelta | null, roles: Map<number, string>, what: 'cpu_ms' | 'sleeps' = 'cpu_ms'): Record<string, number> {
  const out: Record<string, number> = {};
  if (d === null) return out;
  for (const t of d.threads) {
    const r = (roles.get(t.tid) ?? 'other').replace(/\?? \(.*$/, '');
    out[r] = (out[r] ?? 0) + t[what];
  }
  return out;
}

/**
 * Sleeps (voluntary context switches, i.e. wake-ups) per answered request by thread role, rounded
 * to 0.01: the hand-offs between threads a request costs, which CPU contention does not change
 * (issue 11: each wake-up of a sleeping thread costs the waker a futex call and the woken thread a
 * scheduling round, tens of µs on this KVM guest).
 */
function sleepsPerRequestByRole(d: CpuDelta | null, roles: Map<number, string>, answered: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(roleCpu(d, roles, 'sleeps'))) out[k] = Math.round((v * 100) / answered) / 100;
  return out;
}

/**
 * The flow is built so that orders are accepted (only cancels of since-filled orders may answer
 * NOT_FOUND): if most orders are refused, the figures would measure the wrong path (e.g. a
 * dist/ rebuilt mid-run by someone else answering INVALID_SIGNATURE), so stop instead.
 */
function saneOrThrow(what: string, r: PhaseResult): void {
  const answered = r.stats.order.ok + r.stats.order.rejected();
  if (answered >= 50 && r.stats.order.ok < answered / 2) {
    throw new Error(`${what}: only ${r.stats.order.ok} of ${answered} answered orders were accepted (rejects: ${mapText(r.stats.order.rejects)}); ` +
      'the server refuses the pre-signed flow, so its figures would be meaningless (is dist/ consistent? rebuild and rerun)');
  }
}

// ---- latency phases (issue 11): a light fixed rate, then half the max rate ----

interface LatencyPhases {
  light: PhaseResult;
  light_cpu: PhaseCpu;
  /** The light phase's window in epoch ms (the server's stage rows are picked by arrival in it). */
  light_from_ms: number;
  light_to_ms: number;
  half: PhaseResult;
  half_rate: number;
  /** The half-max phase's window in epoch ms (its stage rows: where its p99 comes from). */
  half_from_ms: number;
  half_to_ms: number;
}

async function latencyPhases(gen: Generator, server: ServerChild, signers: Signers, args: Args, max_requests_per_s: number): Promise<LatencyPhases> {
  const port = server.port;
  const C = args.connections;
  const half_rate = Math.max(1, max_requests_per_s / 2);
  await signers.ensurePerLane(Math.ceil(((LIGHT_RATE_PER_S + half_rate) * args.seconds) / C) + 2, SIGN_BUDGET_MS);
  // Progress on stderr (the report comes at the end): lets a tool attached to the server (perf,
  // strace) find the light phase.
  console.error(`load: ${LIGHT_RATE_PER_S}/s phase starts (${args.seconds} s)`);
  const light_from_ms = epochNowMs();
  const m = await measured(server, () => gen.runPhase({ port, lanes: signers.lanes, mode: 'open', rate: LIGHT_RATE_PER_S, duration_ms: args.seconds * 1000, records: true }));
  const light = m.value;
  const light_to_ms = epochNowMs();
  saneOrThrow(`${LIGHT_RATE_PER_S}/s phase`, light);
  const half_from_ms = epochNowMs();
  const half = await gen.runPhase({ port, lanes: signers.lanes, mode: 'open', rate: half_rate, duration_ms: args.seconds * 1000 });
  const half_to_ms = epochNowMs();
  saneOrThrow('half-max-rate phase', half);
  return { light, light_cpu: m.cpu, light_from_ms, light_to_ms, half, half_rate, half_from_ms, half_to_ms };
}

// ---- main ----

interface MaxRun {
  result: PhaseResult;
  cpu: PhaseCpu;
  orders_per_s: number;
  requests_per_s: number;
  /** The run's window on the server's stage clock (epoch ms). */
  from_ms: number;
  to_ms: number;
  /** The DA thread's backlog right after the run (bench/load/da_lag.ts). */
  da: DaLag;
}

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
  const gen = chooseGenerator(args.generator);
  say(`generator: ${gen.note}`);
  const profile_dir = args.profile ? mkdtempSync(path.join(os.tmpdir(), 'ringbook-load-prof-')) : null;
  const big = 1_000_000_000;
  const server = await startServer({
    main_js,
    admin_token: 'load-bench-admin-token',
    config: {
      rate_limits: { orders_per_wallet: big, cancels_per_wallet: big, deposits_per_wallet: big, withdrawals_per_wallet: big, gets_per_ip: big },
      diagnostics: { stage_timings: true },
      matcher: { cpu: args.matcher_cpu },
      ...(args.background === null ? {} : { threads: { background: args.background } }),
      verify: {
        ...(args.verify_steal_after_us === null ? {} : { steal_after_us: args.verify_steal_after_us }),
        ...(args.verify_task_items === null ? {} : { task_items_max: args.verify_task_items }),
      },
      // On (as by default) on a free port: the on/off comparison flips its recording.
      metrics: { enabled: true, port: 0 },
    },
    node_flags: [...(profile_dir ? ['--cpu-prof', `--cpu-prof-dir=${profile_dir}`] : []), ...args.server_flags],
    stdout_file: args.server_log,
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
    const fund = await guard(measured(server, () => gen.runPhase({ port: server.port, lanes: depositLanes(addresses, args.connections, server.admin_token), mode: 'closed', duration_ms: Infinity })));
    const dep = fund.value.stats.deposit;
    say(`setup: ${int(args.wallets)} wallets (keys ${f1(keys_ms)} ms), ${int(dep.ok)}/${int(dep.sent)} deposits OK in ${f1(fund.value.window_ms / 1000)} s (${int((dep.ok * 1000) / fund.value.window_ms)}/s)` +
      (dep.rejected() > 0 ? `, rejected: ${mapText(dep.rejects)}` : ''));
    if (dep.ok !== args.wallets * 2) throw new Error(`funding failed: ${dep.ok} of ${args.wallets * 2} deposits accepted (${mapText(dep.rejects)})`);

    // Verify stage, measured here on one thread while the server is idle.
    const vs = measureVerifyStage(secp, Array.from({ length: 64 }, (_, i) => walletKey(secp, `${args.seed}-verify`, i)), 1200);
    const verify_threads = Math.max(1, os.availableParallelism() - 1);
    say(`verify stage (this process, 1 thread, native libsecp256k1, per CPU-second): EIP-191 hash + recover + address ${int(vs.full_per_cpu_s)}/s ` +
      `(${f1(1e6 / vs.full_per_cpu_s)} us CPU each; ecdsaRecover alone ${int(vs.recover_per_cpu_s)}/s; ecdsaSign ${int(vs.sign_per_cpu_s)}/s); ` +
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
      const m = await guard(measured(server, () => gen.runPhase({ port: server.port, lanes: signers!.lanes, mode: 'closed', duration_ms: args.seconds * 1000 })));
      const res = m.value;
      saneOrThrow(`run ${r + 1}`, res);
      const secs = res.window_ms / 1000;
      const to_ms = epochNowMs();
      const da = await guard(daLag(server.port, server.admin_token));
      runs.push({ result: res, cpu: m.cpu, orders_per_s: res.in_window.orders_ok / secs, requests_per_s: res.in_window.responses / secs, from_ms, to_ms, da });
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
    const lat = await guard(latencyPhases(gen, server, signers, args, median(runs.map((x) => x.requests_per_s))));
    const signed_total = signers.signed;
    const sign_s = signers.sign_wall_ms / 1000;
    await signers.close();
    signers = null;

    // Stop the server cleanly (profiles are written at exit).
    await server.stop();

    // ---- report ----
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
    const orders_med = median(runs.map((x) => x.orders_per_s));
    const med_run = [...runs].sort((a, b) => a.orders_per_s - b.orders_per_s)[Math.floor((runs.length - 1) / 2)];
    say(`  median: ${int(orders_med)} accepted orders/s (${int(median(runs.map((x) => x.requests_per_s)))} requests/s);` +
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
    say('');
    for (const line of [...ceilingLines(ceiling), ...latencyLines(latency), ...stageLines(stages), ...tailLines(tail)]) say(line);
    const cost = cost_runs.length > 0 ? costFigures(cost_runs) : null;
    if (cost !== null) {
      say('');
      for (const line of costLines(cost_runs, cost, args.metrics_seconds)) say(line);
    }
    if (args.background !== null) say(`(server ran with threads.background nice ${args.background.nice}, policy ${args.background.policy}: ${server.stdout_lines.filter((l) => l.includes('config threads.background')).map((l) => /"msg":"([^"]*)"/.exec(l)?.[1] ?? l).join('; ') || 'no priority line in its log'})`);
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
      requests_per_s: Math.round(median(runs.map((x) => x.requests_per_s))),
      wallets: args.wallets,
      connections: C,
      rejected: [...mergeRejects([...runs.map((x) => x.result), fr]).values()].reduce((s, v) => s + v, 0),
      server_cpu_pct: Math.round(med_run.cpu.server?.pct ?? 0),
      other_processes_cpu_pct: med_run.cpu.machine_pct === null ? null
        : Math.round(Math.max(0, med_run.cpu.machine_pct - (med_run.cpu.server?.pct ?? 0) - (med_run.cpu.generator?.pct ?? 0))),
      generator_cpu_pct: Math.round(med_run.cpu.generator?.pct ?? 0),
      verify_per_cpu_s_1thread: Math.round(vs.full_per_cpu_s),
      cores: os.availableParallelism(),
      orders_target_pass: orders_med >= TARGET_ORDERS_PER_S,
      p99_target_pass: fixed_p99 < TARGET_P99_MS,
      generator: gen.name,
      generator_cpu_us_per_request: Math.round(generatorUsPerRequest(med_run.result, med_run.cpu) * 10) / 10,
      fixed_generator_cpu_us_per_request: Math.round(generatorUsPerRequest(fr, fx.cpu) * 10) / 10,
      ...ceiling,
      ...latency,
      ...stages,
      tail_stages_us_at_1000: tail,
      server_cpu_us_per_request_by_thread: by_role_max,
      server_cpu_us_per_request_at_1000: Math.round(((lat.light_cpu.server?.cpu_ms ?? 0) * 1000) / light_answered),
      server_cpu_us_per_request_at_1000_by_thread: by_role_light,
      server_wakeups_per_request_at_1000: sleeps_light_total,
      server_wakeups_per_request_at_1000_by_thread: sleeps_light,
      matcher_cpu: args.matcher_cpu,
      threads_background: args.background,
      verify_steal_after_us: args.verify_steal_after_us,
      verify_task_items: args.verify_task_items,
      da_lag_batches_after_max: Math.max(...runs.map((x) => x.da.lag_batches)),
      da_catch_up_ms_after_max: Math.max(...runs.map((x) => x.da.catch_up_ms)),
      ...(cost ?? {}),
    };
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
