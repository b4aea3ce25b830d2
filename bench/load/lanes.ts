// The timed part of the load generator: pre-built request bytes written over many keep-alive raw
// TCP connections, responses parsed minimally, latency recorded in HdrHistograms.
//
// Decisions:
// - A lane is one logical client: a fixed set of wallets and the queue of their pre-signed
//   requests, in order. A lane is served by one connection at a time and has at most ONE request
//   outstanding (window 1). Two reasons: (1) the server's uWS version terminates a connection that
//   sends a second request while an asynchronous response is still pending (measured: two
//   pipelined POST /deposit on one socket -> the socket is closed with no answer), so HTTP/1.1
//   pipelining is not usable against it; (2) with one request in flight per lane, the requests of
//   one wallet can never overtake each other, so strictly increasing nonces arrive in order and a
//   cancel always follows the order it names. Concurrency comes from the number of connections.
// - Connections are opened per phase (uWS closes idle keep-alive connections after ~10 s, and the
//   gaps between phases, where signing happens, can be longer).
// - Parsing: status from the status line, `Content-Length: ` (uWS writes it last, this casing),
//   body only for non-200 (the `"error"` code) and for 200 orders (whether `"fills":[]` is empty).
// - Closed loop (max throughput): a lane writes its next request as soon as the previous answer
//   is complete; latency = answer complete - write. Open loop (fixed rate): request i is
//   scheduled at t0 + i / rate on lane i mod lanes; if that lane is still busy it waits in the
//   lane's queue; latency = answer complete - SCHEDULED time (no coordinated omission: a stalled
//   server shows up as latency, not as fewer samples).
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import * as hdr from 'hdr-histogram-js';
import { KIND_CANCEL, KIND_ORDER } from './flow.js';
import type { Transport } from './ws_frames.js';

export interface Segment {
  buf: Buffer;
  offsets: Uint32Array;
  kinds: Uint8Array;
}

/** One segment from ASCII request texts (one byte per character) and their kinds. */
export function textSegment(texts: string[], kinds: ArrayLike<number>): Segment {
  const offsets = new Uint32Array(texts.length + 1);
  let at = 0;
  texts.forEach((t, j) => {
    offsets[j] = at;
    at += t.length;
  });
  offsets[texts.length] = at;
  return { buf: Buffer.from(texts.join(''), 'latin1'), offsets, kinds: Uint8Array.from(kinds) };
}

export class Lane {
  readonly id: number;
  private segs: Segment[] = [];
  private seg = 0;
  private idx = 0;
  private left = 0;
  /** Kind of the request last returned by take(). */
  last_kind = 0;

  constructor(id: number) {
    this.id = id;
  }

  add(s: Segment): void {
    this.segs.push(s);
    this.left += s.kinds.length;
  }

  get remaining(): number {
    return this.left;
  }

  /**
   * The requests still to send, in order, without consuming them (the native generator writes
   * them to its request file and reports how many it sent; `skip` then consumes those).
   */
  *pending(): Generator<{ bytes: Buffer; kind: number }> {
    for (let s = this.seg, i = this.idx; s < this.segs.length; s++, i = 0) {
      const seg = this.segs[s];
      for (; i < seg.kinds.length; i++) yield { bytes: seg.buf.subarray(seg.offsets[i], seg.offsets[i + 1]), kind: seg.kinds[i] };
    }
  }

  /** Consumes `n` requests (sent by another generator); returns how many there were. */
  skip(n: number): number {
    let done = 0;
    while (done < n && this.take() !== null) done++;
    return done;
  }

  take(): Buffer | null {
    while (this.seg < this.segs.length) {
      const s = this.segs[this.seg];
      if (this.idx < s.kinds.length) {
        const i = this.idx++;
        this.left--;
        this.last_kind = s.kinds[i];
        return s.buf.subarray(s.offsets[i], s.offsets[i + 1]);
      }
      this.segs[this.seg] = EMPTY_SEGMENT; // let the consumed bytes go
      this.seg++;
      this.idx = 0;
    }
    return null;
  }
}

const EMPTY_SEGMENT: Segment = { buf: Buffer.alloc(0), offsets: new Uint32Array(1), kinds: new Uint8Array(0) };

export type Histogram = ReturnType<typeof hdr.build>;

/** Microsecond histogram, 1 us .. 120 s, 3 significant digits. */
export function newHistogram(): Histogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 120_000_000,
    numberOfSignificantValueDigits: 3,
    autoResize: true,
    useWebAssembly: false,
  });
}

export class KindStats {
  sent = 0;
  ok = 0;
  /** Orders answered 200 whose `fills` list is not empty (they traded as taker). */
  with_fills = 0;
  rejects = new Map<string, number>();

  rejected(): number {
    let n = 0;
    for (const v of this.rejects.values()) n += v;
    return n;
  }
}

export interface PhaseOptions {
  port: number;
  lanes: Lane[];
  mode: 'closed' | 'open';
  /** Length of the measured window. Infinity (closed mode only) runs until every lane is empty. */
  duration_ms: number;
  /** Open mode: requests per second over all lanes. */
  rate?: number;
  /** Closed mode: end the window once this share of lanes ran out of requests (default 0.1). */
  exhausted_share_end?: number;
  /** How long to wait for outstanding answers after the window (default 5 s). */
  drain_ms?: number;
  /** Keep one record per answer (times and the server's request number: bench/load/tail.ts); native generator only. */
  records?: boolean;
  /**
   * The generator's own EEVDF slice request in µs (loadgen --slice-us, native-bench/loadgen_slice.h);
   * native generator only. It changes the measuring tool, not the server.
   */
  generator_slice_us?: number;
  /**
   * The native generator's socket I/O (loadgen --io): 'auto' (its default) is io_uring in closed
   * mode when the kernel allows it, else (and in open mode) epoll; the other two force one.
   * Native generator only.
   */
  generator_io?: GeneratorIo;
  /**
   * Open mode: the native generator's early wake in µs (loadgen --spin-us: its timer fires this
   * long before a due send and it spins to it); undefined: the binary's default. Native generator only.
   */
  generator_spin_us?: number;
  /** 'ws': the requests go as WebSocket `post` frames (bench/load/ws_frames.ts); native generator only. Default 'http'. */
  transport?: Transport;
  /**
   * With transport 'ws': lanes sharing one WebSocket (loadgen --ws-lanes-per-connection; each lane
   * keeps one post in flight, so a socket has up to this many). Undefined or 1: one lane per socket.
   */
  ws_lanes_per_connection?: number;
}

/** loadgen --io (native-bench/README.md). */
export type GeneratorIo = 'auto' | 'io_uring' | 'epoll';

export interface PhaseResult {
  mode: 'closed' | 'open';
  connections: number;
  /** Measured window actually used (ms): duration, or less when the pool ran out. */
  window_ms: number;
  ended_early: boolean;
  stats: Record<'order' | 'cancel' | 'deposit', KindStats>;
  /** Answers completed inside the window, by kind (for rates). */
  in_window: { orders_ok: number; cancels_ok: number; responses: number };
  /** Closed: answer - write. Open: answer - scheduled time. Microseconds. */
  latency: Histogram;
  /** Open mode only: answer - write (the server's part without the generator's queueing). */
  service: Histogram;
  /** Open mode only: write - scheduled (how late the generator was). */
  send_delay: Histogram;
  /** Requests written but never answered (connection closed, or drain timed out). */
  unanswered: number;
  /** Open mode: scheduled requests that were never written (lane empty or drain timeout). */
  not_sent: number;
  socket_errors: number;
  connections_closed: number;
  /** CPU the generator spent on the phase when it measures itself (the native one: getrusage). */
  generator_cpu_ms?: number;
  /** The native generator's socket I/O as it ran (loadgen's generator_io; a binary without it used epoll). */
  generator_io?: 'io_uring' | 'epoll';
  /** Open mode, native generator: the early wake it ran with (loadgen's spin_us; absent from binaries before it: none). */
  generator_spin_us?: number;
  /** One record per answer, when asked for (`records`) and the generator keeps them. */
  records?: AnswerRecords;
}

/** Per answer, epoch ms (the server's stage clock): scheduled, written, read; the X-Request-Id number (0: none). */
export interface AnswerRecords {
  sched_ms: Float64Array;
  sent_ms: Float64Array;
  done_ms: Float64Array;
  request_no: Float64Array;
  status: Uint16Array;
}

const CRLF2 = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = Buffer.from('Content-Length: ');
const ERROR_KEY = Buffer.from('"error":"');
const EMPTY_FILLS = Buffer.from('"fills":[]');

class Conn {
  readonly lane: Lane;
  sock: net.Socket | null = null;
  busy = false;
  closed = false;
  kind = 0;
  sent_at = 0;
  sched_at = 0;
  rest: Buffer | null = null;
  /** Open mode: scheduled times waiting for this lane. */
  queue: number[] = [];
  qhead = 0;

  constructor(lane: Lane) {
    this.lane = lane;
  }
}

function errorCode(status: number, b: Buffer, start: number, end: number): string {
  if (status === 429) return 'RATE_LIMITED';
  const k = b.indexOf(ERROR_KEY, start);
  if (k < 0 || k >= end) return `HTTP_${status}`;
  const from = k + ERROR_KEY.length;
  const to = b.indexOf(0x22, from);
  if (to < 0 || to > end || to - from > 40) return `HTTP_${status}`;
  return b.toString('latin1', from, to);
}

function connect(port: number, conn: Conn, onData: (c: Conn, chunk: Buffer) => void, onClose: (c: Conn, had_error: boolean) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ port, host: '127.0.0.1', noDelay: true });
    let up = false;
    sock.once('connect', () => {
      up = true;
      conn.sock = sock;
      resolve();
    });
    sock.on('data', (chunk: Buffer) => onData(conn, chunk));
    sock.on('error', (e) => {
      if (!up) reject(e);
    });
    sock.on('close', (had_error) => {
      if (up) onClose(conn, had_error);
    });
  });
}

/** Runs one phase over fresh connections (one per lane) and returns its counters and histograms. */
export async function runPhase(opts: PhaseOptions): Promise<PhaseResult> {
  const open = opts.mode === 'open';
  const rate = opts.rate ?? 0;
  if (open && !(rate > 0 && Number.isFinite(opts.duration_ms))) throw new RangeError('open mode needs a rate and a finite duration');
  if (opts.generator_slice_us !== undefined) throw new RangeError('a generator slice (loadgen --slice-us) needs the native generator');
  if (opts.generator_io !== undefined) throw new RangeError('a generator I/O choice (loadgen --io) needs the native generator');
  if (opts.generator_spin_us !== undefined) throw new RangeError('a generator early wake (loadgen --spin-us) needs the native generator');
  if ((opts.transport ?? 'http') !== 'http') throw new RangeError('--transport ws needs the native generator');
  const drain_ms = opts.drain_ms ?? 5000;
  const conns = opts.lanes.map((l) => new Conn(l));
  const result: PhaseResult = {
    mode: opts.mode,
    connections: conns.length,
    window_ms: 0,
    ended_early: false,
    stats: { order: new KindStats(), cancel: new KindStats(), deposit: new KindStats() },
    in_window: { orders_ok: 0, cancels_ok: 0, responses: 0 },
    latency: newHistogram(),
    service: newHistogram(),
    send_delay: newHistogram(),
    unanswered: 0,
    not_sent: 0,
    socket_errors: 0,
    connections_closed: 0,
  };
  const by_kind = [result.stats.order, result.stats.cancel, result.stats.deposit];
  let t0 = 0;
  let t_end = Infinity;
  let sending = false;
  let busy_count = 0;
  let exhausted = 0;
  const exhausted_end = Math.max(1, Math.ceil((opts.exhausted_share_end ?? 0.1) * conns.length));
  let finish: (() => void) | null = null;

  const send = (c: Conn, bytes: Buffer, sched: number): void => {
    const now = performance.now();
    c.busy = true;
    busy_count++;
    c.kind = c.lane.last_kind;
    c.sent_at = now;
    c.sched_at = sched;
    by_kind[c.kind].sent++;
    if (open) {
      const d = Math.round((now - sched) * 1000);
      result.send_delay.recordValue(d > 0 ? d : 0);
    }
    (c.sock as net.Socket).write(bytes);
  };

  const laneEmpty = (now: number): void => {
    exhausted++;
    if (!open && Number.isFinite(opts.duration_ms) && exhausted >= exhausted_end && sending) {
      // The pre-signed pool is running out: end the window here so concurrency does not fade.
      result.ended_early = true;
      t_end = now;
      sending = false;
    }
  };

  /** A lane became free: what it does next depends on the mode. */
  const onIdle = (c: Conn, now: number): void => {
    if (c.closed) return;
    if (open) {
      if (c.qhead < c.queue.length) {
        const sched = c.queue[c.qhead++];
        const bytes = c.lane.take();
        if (bytes === null) {
          result.not_sent += c.queue.length - c.qhead + 1;
          c.qhead = c.queue.length;
          return;
        }
        send(c, bytes, sched);
      }
      return;
    }
    if (!sending || now >= t_end) return;
    const bytes = c.lane.take();
    if (bytes === null) {
      laneEmpty(now);
      return;
    }
    send(c, bytes, now);
  };

  const onResponse = (c: Conn, status: number, b: Buffer, body_start: number, body_end: number): void => {
    const now = performance.now();
    c.busy = false;
    busy_count--;
    const st = by_kind[c.kind];
    if (status === 200) {
      st.ok++;
      if (c.kind === KIND_ORDER) {
        const f = b.indexOf(EMPTY_FILLS, body_start);
        if (f < 0 || f >= body_end) st.with_fills++;
      }
    } else {
      const code = errorCode(status, b, body_start, body_end);
      st.rejects.set(code, (st.rejects.get(code) ?? 0) + 1);
    }
    const base = open ? c.sched_at : c.sent_at;
    result.latency.recordValue(Math.max(1, Math.round((now - base) * 1000)));
    if (open) result.service.recordValue(Math.max(1, Math.round((now - c.sent_at) * 1000)));
    if (now <= t_end) {
      result.in_window.responses++;
      if (status === 200) {
        if (c.kind === KIND_ORDER) result.in_window.orders_ok++;
        else if (c.kind === KIND_CANCEL) result.in_window.cancels_ok++;
      }
    }
    onIdle(c, now);
    if (finish !== null && busy_count === 0) finish();
  };

  const onData = (c: Conn, chunk: Buffer): void => {
    let b = chunk;
    if (c.rest !== null) {
      b = Buffer.concat([c.rest, chunk]);
      c.rest = null;
    }
    let pos = 0;
    while (pos < b.length) {
      const he = b.indexOf(CRLF2, pos);
      if (he < 0) break;
      const status = (b[pos + 9] - 48) * 100 + (b[pos + 10] - 48) * 10 + (b[pos + 11] - 48);
      let len = 0;
      const cl = b.indexOf(CONTENT_LENGTH, pos);
      if (cl >= 0 && cl < he) {
        for (let i = cl + CONTENT_LENGTH.length; b[i] >= 48 && b[i] <= 57; i++) len = len * 10 + (b[i] - 48);
      }
      const end = he + 4 + len;
      if (end > b.length) break;
      if (c.busy) onResponse(c, status, b, he + 4, end);
      pos = end;
    }
    if (pos < b.length) c.rest = Buffer.from(b.subarray(pos));
  };

  const onClose = (c: Conn, had_error: boolean): void => {
    if (c.closed) return; // closed by us at the end of the phase
    c.closed = true;
    result.connections_closed++;
    if (had_error) result.socket_errors++;
    if (c.busy) {
      c.busy = false;
      busy_count--;
      result.unanswered++;
    }
    if (open) {
      result.not_sent += c.queue.length - c.qhead;
      c.qhead = c.queue.length;
    }
    if (finish !== null && busy_count === 0) finish();
  };

  // Connect in slices so the listen backlog never overflows.
  for (let i = 0; i < conns.length; i += 64) {
    await Promise.all(conns.slice(i, i + 64).map((c) => connect(opts.port, c, onData, onClose)));
  }

  t0 = performance.now();
  t_end = t0 + opts.duration_ms;
  sending = true;
  let pacer: NodeJS.Timeout | null = null;
  let window_timer: NodeJS.Timeout | null = null;
  const window_done = new Promise<void>((resolve) => {
    if (open) {
      const total = Math.floor((rate * opts.duration_ms) / 1000);
      const per_ms = rate / 1000;
      let next = 0;
      const tick = (): void => {
        const now = performance.now();
        const due = Math.min(total, Math.floor((now - t0) * per_ms) + 1);
        for (; next < due; next++) {
          const c = conns[next % conns.length];
          const sched = t0 + next / per_ms;
          if (c.closed) {
            result.not_sent++;
          } else if (!c.busy && c.qhead === c.queue.length) {
            const bytes = c.lane.take();
            if (bytes === null) result.not_sent++;
            else send(c, bytes, sched);
          } else {
            c.queue.push(sched);
          }
        }
        if (next >= total) {
          sending = false;
          resolve();
          return;
        }
        pacer = setTimeout(tick, 1);
      };
      tick();
    } else {
      for (const c of conns) onIdle(c, t0);
      if (Number.isFinite(opts.duration_ms)) {
        const poll = (): void => {
          if (!sending || performance.now() >= t_end) {
            sending = false;
            resolve();
          } else window_timer = setTimeout(poll, Math.max(1, Math.min(50, t_end - performance.now())));
        };
        poll();
      } else {
        // Until every lane is empty: resolve when nothing is in flight any more.
        const poll = (): void => {
          if (busy_count === 0) {
            sending = false;
            t_end = performance.now();
            resolve();
          } else window_timer = setTimeout(poll, 5);
        };
        window_timer = setTimeout(poll, 5);
      }
    }
  });
  await window_done;
  if (!Number.isFinite(t_end) || t_end > performance.now()) t_end = Math.min(t_end, performance.now());
  result.window_ms = t_end - t0;
  // Drain: wait for every outstanding answer (and, open mode, every queued request).
  const pendingWork = (): boolean => busy_count > 0 || (open && conns.some((c) => !c.closed && c.qhead < c.queue.length));
  if (pendingWork()) {
    await new Promise<void>((resolve) => {
      const deadline = setTimeout(() => {
        finish = null;
        resolve();
      }, drain_ms);
      const check = (): void => {
        if (!pendingWork()) {
          clearTimeout(deadline);
          finish = null;
          resolve();
        }
      };
      finish = check;
      check();
    });
  }
  if (pacer !== null) clearTimeout(pacer);
  if (window_timer !== null) clearTimeout(window_timer);
  // Whatever is still outstanding is lost; in open mode record it as (now - scheduled) at least.
  const now = performance.now();
  for (const c of conns) {
    if (c.busy) {
      result.unanswered++;
      if (open) result.latency.recordValue(Math.round((now - c.sched_at) * 1000));
      c.busy = false;
    }
    if (open && c.qhead < c.queue.length) {
      for (let i = c.qhead; i < c.queue.length; i++) result.latency.recordValue(Math.round((now - c.queue[i]) * 1000));
      result.not_sent += c.queue.length - c.qhead;
      c.qhead = c.queue.length;
    }
    c.closed = true;
    c.sock?.destroy();
  }
  return result;
}
