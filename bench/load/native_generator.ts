// The native load generator (native-bench/loadgen.c) driven from Node: the lanes' pre-signed
// request bytes go to a request file, the binary writes them over its keep-alive connections
// (io_uring, else epoll: loadgen --io; one request in flight per lane, the same rules as bench/load/lanes.ts), and its one JSON
// line becomes the same PhaseResult the Node generator returns, so bench/load.ts reports both
// alike. Why: the Node generator costs ~43 us of CPU per request on the cores the server needs;
// the C one costs a fraction of that (docs/benchmarks.md, section "The load generator").
//
// File format (little-endian; loadgen.c checks every length): "RBLG0001", u32 lanes, u32 0, then
// per lane u32 count and count records { u8 kind, u32 length, bytes }.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WsFrameMaker, wsSaneOrThrow, type Transport } from './ws_frames.js';
import { KindStats, newHistogram, runPhase, type AnswerRecords, type GeneratorIo, type Histogram, type Lane, type PhaseOptions, type PhaseResult } from './lanes.js';

const MAGIC = Buffer.from('RBLG0001', 'latin1');
const RECORDS_MAGIC = 'RBLR0001';
/** Bytes per answer record in loadgen's --records file (native-bench/loadgen_records.h). */
const RECORD_BYTES = 40;
const RECORDS_HEADER_BYTES = 24;
/** Bytes gathered before one write to the request file (a run's file is ~10-40 MB). */
const WRITE_CHUNK_BYTES = 4 << 20;
/** Time the binary gets beyond its window and drain before it is killed (connects, file load, output). */
const CHILD_GRACE_MS = 30_000;
/** Longest run the binary accepts for --until-empty phases (its own DURATION_MS_MAX is 10 min). */
const UNTIL_EMPTY_BUDGET_MS = 600_000;

function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'native-bench'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error('native generator: repository root (package.json + native-bench/) not found above ' + fileURLToPath(import.meta.url));
}

/** Where `make native` puts the binary. */
export const LOADGEN_BINARY = path.join(repoRoot(), 'native-bench', 'build', 'loadgen');

export function nativeGeneratorAvailable(binary = LOADGEN_BINARY): boolean {
  return existsSync(binary);
}

export interface NativeLatency {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

export interface NativeKind {
  sent: number;
  ok: number;
  with_fills: number;
  rejects: Record<string, number>;
}

/** The binary's JSON line (microseconds unless named otherwise). */
export interface NativeReport {
  tool: 'loadgen';
  /**
   * http, or ws (--transport ws: WebSocket order entry) with its frames that were not answers (each
   * also a protocol error), of them id mismatches, pings answered, pongs and close frames received.
   * Absent from binaries before it (http).
   */
  transport?: Transport;
  ws_unexpected_frames?: number;
  ws_id_mismatches?: number;
  ws_pings_answered?: number;
  ws_pongs?: number;
  ws_closes?: number;
  /**
   * ws: lanes per WebSocket (--ws-lanes-per-connection), the sockets it opened, and with K > 1 the
   * writes that carried the queued frames and those frames (frames per write: how many went together).
   */
  ws_lanes_per_connection?: number;
  sockets?: number;
  ws_writes?: number;
  ws_frames_written?: number;
  /** What the binary said on stderr in a run that succeeded (set by runLoadgen, not by the binary). */
  stderr_text?: string;
  mode: 'closed' | 'open';
  connections: number;
  requests_in_file: number;
  /** Congestion control of its sockets ("default": the system's). */
  tcp_congestion: string;
  /**
   * Its socket I/O: io_uring (one io_uring_enter per wake-up submits the sends and reaps the
   * answers; auto's choice at max rate) or epoll (a send and a recv per request; auto's choice at
   * a fixed rate and the fallback). Absent from binaries before it (epoll).
   */
  generator_io?: 'io_uring' | 'epoll';
  /** --io auto chose epoll: open mode (auto keeps epoll at a fixed rate), or the step the kernel refused. */
  io_fallback?: string;
  /** io_uring: every io_uring_enter call (epoll_waits counts those that waited). */
  io_uring_enters?: number;
  /** io_uring: its provided 2 KiB receive buffers (--recv-buffers, else 2 per lane, 64 to 8,192). */
  io_uring_recv_buffers?: number;
  /** io_uring: multishot recvs that ended and were armed again. */
  io_uring_recv_rearms?: number;
  /** io_uring: of those, the ends for want of a provided buffer (ENOBUFS: every one taken, the bytes still in the socket). */
  io_uring_recv_nobufs?: number;
  /** With --slice-us: the slice the kernel reported for the generator afterwards (µs), and the one it had before. */
  slice_us?: number;
  slice_us_before?: number;
  /**
   * Open mode: the early wake (--spin-us, µs before each due send), the wakes that spun to their due
   * time and the time those spins took (µs). Absent from binaries before it (no early wake).
   */
  spin_us?: number;
  spins?: number;
  spin_us_total?: number;
  rate_per_s?: number;
  scheduled?: number;
  window_ms: number;
  run_ms: number;
  ended_early: boolean;
  requests_sent: number;
  responses: number;
  unanswered: number;
  not_sent: number;
  status_2xx: number;
  status_4xx: number;
  status_5xx: number;
  status_other: number;
  socket_errors: number;
  connections_closed: number;
  protocol_errors: number;
  unexpected_responses: number;
  /** First and last write, ms after the start of the window. */
  first_send_ms: number;
  last_send_ms: number;
  /** Open mode: writes before their scheduled time (0 unless the scheduler is wrong). */
  early_sends: number;
  in_window: { responses: number; orders_ok: number; cancels_ok: number };
  kinds: Record<'order' | 'cancel' | 'deposit' | 'other', NativeKind>;
  /**
   * timer_late (open mode; absent before --spin-us): the schedule timer's armed fire time to the
   * generator's first clock read after it (the wake-up's lateness, which the early wake absorbs).
   */
  latency_us: Record<'latency' | 'service' | 'send_delay', NativeLatency> & { timer_late?: NativeLatency };
  /** CPU of the run (connects, window, drain), not of loading the file. */
  cpu_us: number;
  cpu_user_us: number;
  cpu_sys_us: number;
  cpu_total_us: number;
  generator_cpu_us_per_request: number;
  /**
   * epoll_wait calls, the events they returned, and recvs that returned bytes (one per answer unless
   * answers arrive split). io_uring: its waiting io_uring_enter calls, completions and recv completions.
   */
  epoll_waits: number;
  epoll_events: number;
  reads: number;
  /** The bytes those recvs returned (absent from binaries before it). */
  read_bytes?: number;
  /** Context switches of the run: voluntary (slept in epoll_wait) and involuntary (preempted). */
  voluntary_context_switches: number;
  involuntary_context_switches: number;
  lane_sent?: number[];
  /** With --records: answers recorded, and the offset that puts its monotonic stamps on the wall clock. */
  records?: number;
  clock_realtime_minus_monotonic_ns?: number;
  histograms?: Record<'latency' | 'service' | 'send_delay', [number, number][]>;
}

/**
 * Writes every lane's pending requests (not consuming them); returns how many were written. With
 * transport 'ws' each record is that request's WebSocket post frame (ws_frames.ts).
 */
export function writeRequestFile(file: string, lanes: Lane[], transport: Transport = 'http'): number {
  const frames = transport === 'ws' ? new WsFrameMaker() : null;
  const fd = openSync(file, 'w', 0o600);
  let total = 0;
  try {
    const head = Buffer.alloc(16);
    MAGIC.copy(head, 0);
    head.writeUInt32LE(lanes.length, 8);
    writeSync(fd, head);
    let parts: Buffer[] = [];
    let bytes = 0;
    const flush = (): void => {
      if (parts.length > 0) writeSync(fd, Buffer.concat(parts, bytes));
      parts = [];
      bytes = 0;
    };
    for (const [li, lane] of lanes.entries()) {
      const reqs = [...lane.pending()];
      const count = Buffer.alloc(4);
      count.writeUInt32LE(reqs.length, 0);
      parts.push(count);
      bytes += 4;
      for (const [k, r] of reqs.entries()) {
        const out = frames === null ? r.bytes : frames.frame(r.bytes, li, k);
        const rec = Buffer.alloc(5);
        rec[0] = r.kind;
        rec.writeUInt32LE(out.length, 1);
        parts.push(rec, out);
        bytes += 5 + out.length;
        if (bytes >= WRITE_CHUNK_BYTES) flush();
      }
      total += reqs.length;
    }
    flush();
  } finally {
    closeSync(fd);
  }
  return total;
}

/** Runs the binary with `args` and returns its JSON line; a non-zero exit throws with its stderr. */
export function runLoadgen(args: string[], timeout_ms: number, binary = LOADGEN_BINARY): Promise<NativeReport> {
  if (!existsSync(binary)) throw new Error(`native load generator ${binary} not built: run \`make native\` (or \`make test\` / \`make bench\`)`);
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      out += d;
    });
    child.stderr.on('data', (d: string) => {
      err += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout_ms);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`loadgen exited with ${code ?? signal}: ${err.trim() || '(no stderr)'}`));
        return;
      }
      const line = out.trim().split('\n').pop() ?? '';
      try {
        const rep = JSON.parse(line) as NativeReport;
        if (err.trim() !== '') rep.stderr_text = err.trim();
        resolve(rep);
      } catch {
        reject(new Error(`loadgen printed no JSON line: ${line.slice(0, 200)}`));
      }
    });
  });
}

/**
 * loadgen's --records file as epoch-ms arrays (its CLOCK_MONOTONIC stamps plus the realtime offset
 * it read at its start: the server's stage stamps are on that same wall clock). sent_ms: read right
 * before the syscall that sent the request; done_ms: read once per batch of answers, after the wait
 * that returned it (native-bench/README.md, "Stamps").
 */
export function readRecordsFile(file: string): AnswerRecords {
  const b = readFileSync(file);
  if (b.length < RECORDS_HEADER_BYTES || b.toString('latin1', 0, 8) !== RECORDS_MAGIC) throw new Error(`${file}: not a loadgen records file`);
  const offset_ns = b.readBigInt64LE(8);
  const n = Number(b.readBigUInt64LE(16));
  if (b.length !== RECORDS_HEADER_BYTES + n * RECORD_BYTES) throw new Error(`${file}: ${n} records do not fill ${b.length} bytes`);
  const out: AnswerRecords = {
    sched_ms: new Float64Array(n), sent_ms: new Float64Array(n), done_ms: new Float64Array(n),
    request_no: new Float64Array(n), status: new Uint16Array(n),
  };
  // ns since boot + offset stays exact in bigint; the epoch ms as f64 keep ~0.2 µs.
  const ms = (at: number): number => Number(b.readBigInt64LE(at) + offset_ns) / 1e6;
  for (let i = 0, at = RECORDS_HEADER_BYTES; i < n; i++, at += RECORD_BYTES) {
    out.sched_ms[i] = ms(at);
    out.sent_ms[i] = ms(at + 8);
    out.done_ms[i] = ms(at + 16);
    out.request_no[i] = Number(b.readBigUInt64LE(at + 24));
    out.status[i] = b.readUInt16LE(at + 36);
  }
  return out;
}

function histogramOf(buckets: [number, number][] | undefined): Histogram {
  const h = newHistogram();
  for (const [value_us, count] of buckets ?? []) h.recordValueWithCount(Math.max(1, value_us), count);
  return h;
}

function kindStats(k: NativeKind): KindStats {
  const s = new KindStats();
  s.sent = k.sent;
  s.ok = k.ok;
  s.with_fills = k.with_fills;
  for (const [code, n] of Object.entries(k.rejects)) s.rejects.set(code, n);
  return s;
}

/** The native report as the Node generator's PhaseResult (the lanes are advanced by what it sent). */
export function phaseResultOf(rep: NativeReport, lanes: Lane[]): PhaseResult {
  const sent = rep.lane_sent ?? [];
  if (sent.length !== lanes.length) throw new Error(`loadgen reported ${sent.length} lanes, expected ${lanes.length}`);
  lanes.forEach((l, i) => {
    if (l.skip(sent[i]) !== sent[i]) throw new Error(`loadgen sent more requests on lane ${i} than it was given`);
  });
  const stats = {
    order: kindStats(rep.kinds.order),
    cancel: kindStats(rep.kinds.cancel),
    deposit: kindStats(rep.kinds.deposit),
  };
  return {
    mode: rep.mode,
    connections: rep.connections,
    window_ms: rep.window_ms,
    ended_early: rep.ended_early,
    stats,
    in_window: { orders_ok: rep.in_window.orders_ok, cancels_ok: rep.in_window.cancels_ok, responses: rep.in_window.responses },
    latency: histogramOf(rep.histograms?.latency),
    service: histogramOf(rep.histograms?.service),
    send_delay: histogramOf(rep.histograms?.send_delay),
    unanswered: rep.unanswered,
    not_sent: rep.not_sent,
    // A malformed answer closes its connection like a socket error.
    socket_errors: rep.socket_errors,
    connections_closed: rep.connections_closed,
    generator_cpu_ms: rep.cpu_us / 1000,
    generator_io: rep.generator_io ?? 'epoll',
    ...(rep.spin_us === undefined ? {} : { generator_spin_us: rep.spin_us }),
  };
}

/** The binary's arguments for one phase (the same options as the Node generator's runPhase); `records_file` with opts.records. */
export function loadgenArgs(opts: PhaseOptions, file: string, host = '127.0.0.1', records_file: string | null = null): string[] {
  const args = ['--target', `${host}:${opts.port}`, '--requests', file, '--mode', opts.mode, '--histograms', '--report-lanes'];
  if (opts.records === true) {
    if (records_file === null) throw new RangeError('records asked for without a records file');
    args.push('--records', records_file);
  }
  if (opts.mode === 'open') {
    if (!(opts.rate !== undefined && opts.rate > 0 && Number.isFinite(opts.duration_ms))) throw new RangeError('open mode needs a rate and a finite duration');
    args.push('--rate', String(opts.rate), '--duration-ms', String(opts.duration_ms));
  } else if (Number.isFinite(opts.duration_ms)) {
    args.push('--duration-ms', String(opts.duration_ms));
  } else {
    args.push('--until-empty');
  }
  if (opts.exhausted_share_end !== undefined) args.push('--exhausted-share', String(opts.exhausted_share_end));
  if (opts.drain_ms !== undefined) args.push('--drain-ms', String(opts.drain_ms));
  if (opts.generator_slice_us !== undefined) args.push('--slice-us', String(opts.generator_slice_us));
  if (opts.generator_io !== undefined) args.push('--io', opts.generator_io);
  if (opts.transport === 'ws') args.push('--transport', 'ws');
  if (opts.ws_lanes_per_connection !== undefined && opts.ws_lanes_per_connection !== 1) {
    if (opts.transport !== 'ws') throw new RangeError('lanes sharing a connection (loadgen --ws-lanes-per-connection) need --transport ws: HTTP/1.1 has one request in flight per connection');
    args.push('--ws-lanes-per-connection', String(opts.ws_lanes_per_connection));
  }
  if (opts.generator_spin_us !== undefined) {
    if (opts.mode !== 'open') throw new RangeError('an early wake (loadgen --spin-us) is for open mode: closed mode never waits for the clock');
    args.push('--spin-us', String(opts.generator_spin_us));
  }
  return args;
}

/** One phase on the native generator: the drop-in for lanes.ts's runPhase. */
export async function runNativePhase(opts: PhaseOptions, binary = LOADGEN_BINARY): Promise<PhaseResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ringbook-loadgen-'));
  try {
    const file = path.join(dir, 'requests.bin');
    const transport = opts.transport ?? 'http';
    writeRequestFile(file, opts.lanes, transport);
    const run_ms = Number.isFinite(opts.duration_ms) ? opts.duration_ms : UNTIL_EMPTY_BUDGET_MS;
    const records_file = path.join(dir, 'records.bin');
    const rep = await runLoadgen(loadgenArgs(opts, file, '127.0.0.1', records_file), run_ms + (opts.drain_ms ?? 5000) + CHILD_GRACE_MS, binary);
    if (transport === 'ws') wsSaneOrThrow(rep);
    const res = phaseResultOf(rep, opts.lanes);
    if (opts.records === true) res.records = readRecordsFile(records_file);
    return res;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export type GeneratorName = 'native' | 'node';

export interface Generator {
  name: GeneratorName;
  runPhase(opts: PhaseOptions): Promise<PhaseResult>;
  /** Why this generator (printed by the bench). */
  note: string;
}

/**
 * The generator for a bench run: the one asked for, else native when its binary is built, else
 * Node (saying so: the Node generator's CPU comes out of the server's cores).
 */
export function chooseGenerator(
  requested: GeneratorName | null, binary = LOADGEN_BINARY, io: GeneratorIo | null = null, spin_us: number | null = null, transport: Transport = 'http',
  ws_lanes_per_connection = 1,
): Generator {
  const built = nativeGeneratorAvailable(binary);
  if (transport === 'ws' && (requested === 'node' || !built)) throw new Error(`--transport ws needs the native generator (${binary}; \`make native\`)`);
  if (requested === 'native' && !built) throw new Error(`--generator native: ${binary} not built (run \`make native\`)`);
  if (io !== null && (requested === 'node' || !built)) throw new Error(`--generator-io ${io} needs the native generator (${binary})`);
  if (spin_us !== null && (requested === 'node' || !built)) throw new Error(`--generator-spin-us ${spin_us} needs the native generator (${binary})`);
  if (requested === 'node') return { name: 'node', runPhase, note: 'Node generator (--generator node)' };
  if (built) {
    // The early wake goes to open phases only (closed mode never waits for the clock), unless a
    // phase sets its own; the transport to every phase that names none (funding names http).
    const phase = (o: PhaseOptions): Promise<PhaseResult> => runNativePhase({
      ...o,
      ...(io === null ? {} : { generator_io: io }),
      ...(spin_us === null || o.mode !== 'open' || o.generator_spin_us !== undefined ? {} : { generator_spin_us: spin_us }),
      transport: o.transport ?? transport,
      // Shared sockets only for the phases that go over ws (not funding's HTTP).
      ...((o.transport ?? transport) === 'ws' && ws_lanes_per_connection !== 1 ? { ws_lanes_per_connection } : {}),
    }, binary);
    const notes = [io === null ? '' : `--io ${io}`, spin_us === null ? '' : `--spin-us ${spin_us} in open phases`,
      transport === 'ws' ? `WebSocket order entry (--transport ws${ws_lanes_per_connection === 1 ? '' : `, ${ws_lanes_per_connection} lanes per connection`}; funding over HTTP)` : ''].filter((x) => x !== '');
    return { name: 'native', runPhase: phase, note: `native generator ${binary}${notes.length === 0 ? '' : ` (${notes.join(', ')})`}` };
  }
  return {
    name: 'node',
    runPhase,
    note: `Node generator: ${binary} is not built (\`make native\` builds it); the Node generator costs ~40 us of CPU per request on the server's cores`,
  };
}
