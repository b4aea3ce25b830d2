// The load bench's options (bench/load.ts lists them): parsed through bench/knobs.ts, so each is
// a flag (`--wallets N`) or an environment variable (BENCH_WALLETS=N).
import os from 'node:os';
import path from 'node:path';
import { THREAD_BACKGROUND_DEFAULT, threadPriority } from '../../src/config/sections.js';
import {
  INLINE_BUSY_MAX_PCT_DEFAULT, INLINE_ITEMS_DEFAULT, INLINE_ITEMS_MAX, STEAL_AFTER_US_DEFAULT, STEAL_AFTER_US_MAX, TASK_SIZE_DEFAULT, TASK_SIZE_MAX,
} from '../../src/auth/verify_limits.js';
import type { ThreadPriority } from '../../src/util/thread_priority.js';
import { Knobs } from '../knobs.js';
import type { GeneratorName } from './native_generator.js';
import type { GeneratorIo } from './lanes.js';
import type { Transport } from './ws_frames.js';

/** Most lanes per WebSocket: the server's default limits.ws_posts_in_flight_max (loadgen's WS_LANES_PER_CONNECTION_MAX). */
const WS_LANES_PER_CONNECTION_MAX = 64;

export interface Args {
  wallets: number;
  connections: number;
  seconds: number;
  runs: number;
  rate: number;
  signers: number;
  warmup_s: number;
  profile: boolean;
  /** Run the server with --trace-gc-nvp and report its GCs per phase (bench/load/gc_trace.ts). */
  gc: boolean;
  /** Count the front thread's kernel events in the max runs and the half-max phase (bench/load/perf_stat.ts). */
  perf_stat: boolean;
  server_flags: string[];
  server_log: string | null;
  /** null: this build's dist/src/main.js. */
  server_main: string | null;
  seed: string;
  /** null: native when built, else node. */
  generator: GeneratorName | null;
  /** --loadgen FILE: the native generator's binary (null: this build's native-bench/build/loadgen). */
  loadgen: string | null;
  /** --generator-io auto|io_uring|epoll: the native generator's socket I/O (null: its default, auto). */
  generator_io: GeneratorIo | null;
  /** --generator-spin-us N: the native generator's early wake in its open phases (loadgen --spin-us; null: the binary's default). */
  generator_spin_us: number | null;
  /**
   * --transport http|ws: how the native generator sends the signed requests of the timed phases
   * (ws: WebSocket `post` frames on /ws, bench/load/ws_frames.ts; funding stays on HTTP). Default http.
   */
  transport: Transport;
  /**
   * --ws-lanes-per-connection K (with --transport ws): K lanes share one WebSocket, so each socket
   * has up to K posts in flight (loadgen_ws_lanes.h); connections = --connections / K. Default 1.
   */
  ws_lanes_per_connection: number;
  /** config matcher.cpu for the server (null: no pinning). */
  matcher_cpu: number | null;
  /** threads.pipeline_cpu for the server (--pipeline-cpu), null: off. */
  pipeline_cpu: number | null;
  /** config threads.background for the server (null: the server's default). */
  background: ThreadPriority | null;
  /** config verify.steal_after_us and verify.task_items_max for the server (null: the server's default). */
  verify_steal_after_us: number | null;
  verify_task_items: number | null;
  /** config verify.inline_items_max for the server (null: the server's default). */
  verify_inline_items: number | null;
  /** config verify.inline_busy_max_pct for the server (null: the server's default). */
  verify_inline_busy_max_pct: number | null;
  metrics_pairs: number;
  metrics_seconds: number;
}

/**
 * The Args of a light-load A/B bench's phases (bench/light_ab.ts, bench/matcher_light.ts): their
 * own shape (one run, no warm-up beyond 1 s, no metrics pairs), every server option at the
 * server's default. One literal, so an option added to Args gets its default here once.
 */
export function lightPhaseArgs(o: { wallets: number; connections: number; seconds: number; rate: number; seed: string }): Args {
  return {
    wallets: o.wallets, connections: o.connections, seconds: o.seconds, runs: 1, rate: o.rate,
    signers: Math.max(1, os.availableParallelism()), warmup_s: 1, profile: false, gc: false, perf_stat: false,
    server_flags: [], server_log: null, server_main: null, seed: o.seed, generator: null, loadgen: null, generator_io: null, generator_spin_us: null, transport: 'http', ws_lanes_per_connection: 1, matcher_cpu: null, pipeline_cpu: null,
    background: null, verify_steal_after_us: null, verify_task_items: null, verify_inline_items: null, verify_inline_busy_max_pct: null,
    metrics_pairs: 0, metrics_seconds: 1,
  };
}

/** loadgen's SPIN_US_MAX (native-bench/loadgen_common.h): the longest early wake it takes. */
export const GENERATOR_SPIN_US_MAX = 1000;

/** The knobs every light-load A/B bench takes: the two servers (default: this build's) and the phases' shape. */
export interface LightKnobs {
  a_js: string;
  b_js: string;
  rounds: number;
  seconds: number;
  rate: number;
  wallets: number;
  connections: number;
  /**
   * Untimed light phases per server before the first timed one (`--warmup-phases`). V8's
   * background threads compile and collect for ~30 s after a server's start (docs/benchmarks.md
   * h23o): with one 5 s warm-up, an A/B's "other" CPU compared how far each server's compiler had got.
   */
  warmup_phases: number;
}

/** Untimed light phases before the timed ones, by default: ~20 s at 5 s a phase (h23o: "other" settles after 3-6). */
export const LIGHT_WARMUP_PHASES_DEFAULT = 4;

/** Reads LightKnobs from `knobs` (`own_js`: this build's server; `rounds_default` differs per bench). */
export function lightKnobs(knobs: Knobs, own_js: string, rounds_default: number): LightKnobs {
  return {
    a_js: path.resolve(knobs.optionalString('server-a') ?? own_js),
    b_js: path.resolve(knobs.optionalString('server-b') ?? own_js),
    rounds: knobs.number('rounds', rounds_default, 1, 40),
    seconds: knobs.number('seconds', 5, 1, 60, { integer: false }),
    rate: knobs.number('rate', 1000, 1, 20_000),
    wallets: knobs.number('wallets', 1000, 16, 100_000),
    connections: knobs.number('connections', 64, 1, 1024),
    warmup_phases: knobs.number('warmup-phases', LIGHT_WARMUP_PHASES_DEFAULT, 1, 20),
  };
}

/** bench/knobs.ts: `--wallets N` or BENCH_WALLETS=N, and so on. */
export function parseArgs(): Args {
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
    gc: knobs.flag('gc'),
    perf_stat: knobs.flag('perf-stat'),
    server_flags: (knobs.optionalString('server-flags') ?? '').split(' ').filter((f) => f !== ''),
    server_log: knobs.optionalString('server-log') ?? null,
    server_main: knobs.optionalString('server-main') ?? null,
    seed: knobs.string('seed', 'ringbook-load-1'),
    generator: generatorArg(knobs.optionalString('generator')),
    loadgen: knobs.optionalString('loadgen') ?? null,
    generator_io: generatorIoArg(knobs.optionalString('generator-io')),
    generator_spin_us: knobs.optionalString('generator-spin-us') === undefined ? null : knobs.number('generator-spin-us', 0, 0, GENERATOR_SPIN_US_MAX),
    transport: transportArg(knobs.optionalString('transport')),
    ws_lanes_per_connection: knobs.number('ws-lanes-per-connection', 1, 1, WS_LANES_PER_CONNECTION_MAX),
    matcher_cpu: knobs.optionalString('matcher-cpu') === undefined ? null
      : knobs.number('matcher-cpu', 0, 0, os.availableParallelism() - 1),
    pipeline_cpu: knobs.optionalString('pipeline-cpu') === undefined ? null
      : knobs.number('pipeline-cpu', 0, 0, os.availableParallelism() - 1),
    background: backgroundArg(knobs.optionalString('background')),
    verify_steal_after_us: knobs.optionalString('verify-steal-after-us') === undefined ? null
      : knobs.number('verify-steal-after-us', STEAL_AFTER_US_DEFAULT, 0, STEAL_AFTER_US_MAX),
    verify_task_items: knobs.optionalString('verify-task-items') === undefined ? null
      : knobs.number('verify-task-items', TASK_SIZE_DEFAULT, 1, TASK_SIZE_MAX),
    verify_inline_items: knobs.optionalString('verify-inline-items') === undefined ? null
      : knobs.number('verify-inline-items', INLINE_ITEMS_DEFAULT, 0, INLINE_ITEMS_MAX),
    verify_inline_busy_max_pct: knobs.optionalString('verify-inline-busy-max-pct') === undefined ? null
      : knobs.number('verify-inline-busy-max-pct', INLINE_BUSY_MAX_PCT_DEFAULT, 0, 100),
    metrics_pairs: knobs.number('metrics-pairs', 2, 0, 10),
    metrics_seconds: knobs.number('metrics-seconds', 5, 0.5, 60, num),
  };
  knobs.finish();
  if (a.ws_lanes_per_connection !== 1 && a.transport !== 'ws') throw new RangeError('--ws-lanes-per-connection needs --transport ws (HTTP/1.1 has one request in flight per connection)');
  if (a.connections > a.wallets) throw new RangeError('--connections must not exceed --wallets (each lane owns its wallets)');
  return a;
}

/** `--background nice,policy` (checked by the server's own rule, config/sections.ts threadPriority). */
function backgroundArg(v: string | undefined): ThreadPriority | null {
  if (v === undefined) return null;
  const [nice, policy] = v.split(',');
  return threadPriority({ nice: Number(nice), policy: policy ?? 'other' }, '--background', THREAD_BACKGROUND_DEFAULT);
}

/** undefined (not given): null, the binary's own default (auto). */
function generatorIoArg(v: string | undefined): GeneratorIo | null {
  if (v === undefined) return null;
  if (v === 'auto' || v === 'io_uring' || v === 'epoll') return v;
  throw new RangeError(`--generator-io must be auto, io_uring or epoll, got ${v}`);
}

/** undefined (not given): http, the bench's transport before --transport existed. */
function transportArg(v: string | undefined): Transport {
  if (v === undefined || v === 'http' || v === 'ws') return v ?? 'http';
  throw new RangeError(`--transport must be http or ws, got ${v}`);
}

/** undefined (not given): null, native when built, else node. */
function generatorArg(v: string | undefined): GeneratorName | null {
  if (v === undefined) return null;
  if (v === 'native' || v === 'node') return v;
  throw new RangeError(`--generator must be native or node, got ${v}`);
}
