// What native-bench/loadgen.c's per-request stamps mean (h25g), on both of its backends (--io),
// checked against a loopback server that stamps each request's arrival and its answer's write on
// the same clock (Node's process.hrtime is libuv's uv_hrtime: CLOCK_MONOTONIC, loadgen's clock):
//   - a send stamp is taken BEFORE the syscall that sends the request (io_uring: right before the
//     io_uring_enter that submits it; epoll: right before the send), so it is <= the server's arrival
//     stamp; a stamp taken after the send (io_uring: after the enter, which waits for answers) would
//     come after the server answered (one lane: certainly);
//   - an answer stamp is taken once per batch of completions or events, AFTER the wait that
//     returned them, so it is >= the server's write of that answer, and the records (in the order
//     answers were handled) never go back in time;
//   - a lane's next request is stamped by a clock read of its own, after its previous answer was
//     handled: strictly after that answer's stamp (before h25g it reused the answer's own reading,
//     taken before the answer was even parsed, so the two were equal);
//   - every request is answered exactly once;
//   - at a fixed rate with the early wake (--spin-us, h26g: the timer fires N us before a due send
//     and the generator spins on the clock to it), no send is stamped before its scheduled time,
//     the early wakes happened and the timer's lateness is reported (timer_late, spins).
// Order only, no timing bound: every comparison holds however slow the machine is.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Lane, textSegment } from '../../bench/load/lanes.js';
import { runLoadgen, writeRequestFile } from '../../bench/load/native_generator.js';
import { headServer, loadgenIoCases, loadgenScratchDir, titled } from './loadgen_io.js';

const RUN_TIMEOUT_MS = 60_000;
const KIND_OTHER = 3;
/** loadgen_records.h: "RBLR0001", i64 offset, u64 count, then 40-byte records. */
const RECORDS_HEADER_BYTES = 24;
const RECORD_BYTES = 40;
/** A request's number (its X-Request-Id) is lane * LANE_STRIDE + index. */
const LANE_STRIDE = 1000;

const scratch = loadgenScratchDir('ringbook-loadgen-stamps-');

/** One answer as loadgen recorded it: its raw CLOCK_MONOTONIC ns (exact, as bigint). */
interface RawRecord {
  sched_ns: bigint;
  sent_ns: bigint;
  done_ns: bigint;
  request_no: number;
  lane: number;
}

/** The records file in handling order, stamps unconverted (readRecordsFile's epoch ms keep ~0.2 µs: too coarse for equality). */
function readRawRecords(file: string): RawRecord[] {
  const b = readFileSync(file);
  const n = Number(b.readBigUInt64LE(16));
  expect(b.length).toBe(RECORDS_HEADER_BYTES + n * RECORD_BYTES);
  const out: RawRecord[] = [];
  for (let i = 0, at = RECORDS_HEADER_BYTES; i < n; i++, at += RECORD_BYTES) {
    out.push({ sched_ns: b.readBigInt64LE(at), sent_ns: b.readBigInt64LE(at + 8), done_ns: b.readBigInt64LE(at + 16), request_no: Number(b.readBigUInt64LE(at + 24)), lane: b.readUInt32LE(at + 32) });
  }
  return out;
}

/** The server's own stamps of one request: its head's arrival and its answer's write. */
interface ServerStamps {
  arrived_ns: bigint;
  written_ns: bigint;
}

/**
 * A loopback server answering GET /r/<lane>/<i> with X-Request-Id r-<number in base 36>; every
 * third answer waits for the next turn of the event loop, so answers of several lanes meet in one
 * batch and others come alone.
 */
async function stampingServer(): Promise<{ port: number; stamps: Map<number, ServerStamps>; close: () => Promise<void> }> {
  const stamps = new Map<number, ServerStamps>();
  const srv = await headServer((head, sock) => {
    const arrived_ns = process.hrtime.bigint();
    const m = /^GET \/r\/(\d+)\/(\d+) /.exec(head);
    if (m === null) throw new Error(`unexpected request ${head}`);
    const no = Number(m[1]) * LANE_STRIDE + Number(m[2]);
    const body = '{"fills":[]}';
    const text = `HTTP/1.1 200 OK\r\nX-Request-Id: r-${no.toString(36)}\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const answer = (): void => {
      stamps.set(no, { arrived_ns, written_ns: process.hrtime.bigint() });
      sock.write(text, 'latin1');
    };
    if (no % 3 === 0) setImmediate(answer);
    else answer();
  });
  return { ...srv, stamps };
}

function lanesOf(n_lanes: number, per_lane: number): Lane[] {
  return Array.from({ length: n_lanes }, (_, l) => {
    const lane = new Lane(l);
    const texts = Array.from({ length: per_lane }, (_, i) => `GET /r/${l}/${i} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    lane.add(textSegment(texts, new Uint8Array(per_lane).fill(KIND_OTHER)));
    return lane;
  });
}

/** Runs the real binary over `n_lanes` x `per_lane` requests and checks every stamp against the server's. */
async function checkStamps(io: string, n_lanes: number, per_lane: number): Promise<void> {
  const srv = await stampingServer();
  try {
    const file = path.join(scratch(), `req-${io}-${n_lanes}.bin`);
    const records_file = path.join(scratch(), `rec-${io}-${n_lanes}.bin`);
    writeRequestFile(file, lanesOf(n_lanes, per_lane));
    const rep = await runLoadgen(['--target', `127.0.0.1:${srv.port}`, '--requests', file, '--until-empty', '--io', io, '--records', records_file], RUN_TIMEOUT_MS);
    expect(rep.generator_io).toBe(io);
    const n = n_lanes * per_lane;
    expect([rep.requests_sent, rep.responses, rep.unanswered, rep.socket_errors, rep.unexpected_responses]).toEqual([n, n, 0, 0, 0]);
    const recs = readRawRecords(records_file);

    // Every request answered exactly once.
    const expected = Array.from({ length: n_lanes }, (_, l) => Array.from({ length: per_lane }, (_, i) => l * LANE_STRIDE + i)).flat();
    expect(recs.map((r) => r.request_no).sort((a, b) => a - b)).toEqual(expected.sort((a, b) => a - b));

    const bad: string[] = [];
    const prev_done = new Map<number, bigint>(); // lane -> its last answer's stamp
    let last_done = -1n;
    for (const r of recs) {
      const s = srv.stamps.get(r.request_no);
      if (s === undefined) { bad.push(`${r.request_no}: no server stamps`); continue; }
      // Sent before it arrived; read after it was written.
      if (r.sent_ns > s.arrived_ns) bad.push(`${r.request_no}: send stamp ${r.sent_ns - s.arrived_ns} ns after the server got it`);
      if (r.done_ns < s.written_ns) bad.push(`${r.request_no}: answer stamp ${s.written_ns - r.done_ns} ns before the server wrote it`);
      if (r.sent_ns > r.done_ns) bad.push(`${r.request_no}: sent after answered`);
      // Handling order: batch stamps never go back.
      if (r.done_ns < last_done) bad.push(`${r.request_no}: answer stamp earlier than the answer handled before it`);
      last_done = r.done_ns;
      // The lane's next send: a clock read of its own after the previous answer, not that answer's reading.
      const pd = prev_done.get(r.lane);
      if (pd !== undefined && r.sent_ns <= pd) bad.push(`${r.request_no}: send stamp not after the lane's previous answer stamp (${r.sent_ns - pd} ns)`);
      prev_done.set(r.lane, r.done_ns);
    }
    expect(bad.slice(0, 10)).toEqual([]);
  } finally {
    await srv.close();
  }
}

const IO_CASES = await loadgenIoCases();

for (const c of IO_CASES) describe.skipIf(c.skip !== null)(titled(`loadgen (--io ${c.io}) stamps each request before its send and each answer after its arrival`, c), () => {
  it('one lane: every send stamp precedes the server receiving it, every answer stamp follows the server writing it', async () => {
    await checkStamps(c.io, 1, 40);
  });

  it('8 lanes, answers meeting in batches: the same order for every request, handling order never goes back, each request answered once', async () => {
    await checkStamps(c.io, 8, 25);
  });
});

/** The longest early wake loadgen takes (SPIN_US_MAX): 1 ms ahead of each send, so its wakes spin (this VM's timer is ~50 us late). */
const SPIN_US = 1000;
/** 200/s for 0.5 s on 4 lanes: 100 scheduled sends, 5 ms apart (room for a 1 ms spin before each). */
const OPEN_RATE = 200;
const OPEN_MS = 500;

/** Runs the real binary at a fixed rate with the early wake and checks each send against its schedule and the server. */
async function checkEarlyWake(io: string): Promise<void> {
  const srv = await stampingServer();
  try {
    const n_lanes = 4;
    const file = path.join(scratch(), `req-open-${io}.bin`);
    const records_file = path.join(scratch(), `rec-open-${io}.bin`);
    writeRequestFile(file, lanesOf(n_lanes, 40));
    const rep = await runLoadgen(['--target', `127.0.0.1:${srv.port}`, '--requests', file, '--mode', 'open', '--rate', String(OPEN_RATE),
      '--duration-ms', String(OPEN_MS), '--io', io, '--spin-us', String(SPIN_US), '--records', records_file], RUN_TIMEOUT_MS);
    const n = (OPEN_RATE * OPEN_MS) / 1000;
    expect(rep.generator_io).toBe(io);
    expect([rep.requests_sent, rep.responses, rep.unanswered, rep.not_sent, rep.socket_errors]).toEqual([n, n, 0, 0, 0]);
    // The run says which early wake it had, that its wakes spun, and how late its timer was.
    expect(rep.spin_us).toBe(SPIN_US);
    expect(rep.spins).toBeGreaterThan(0);
    expect(rep.spin_us_total).toBeGreaterThan(0);
    expect(rep.latency_us.timer_late?.count).toBeGreaterThan(0);
    expect(rep.latency_us.send_delay.count).toBe(n);
    expect(rep.early_sends).toBe(0);
    const recs = readRawRecords(records_file);
    expect(recs.length).toBe(n);
    const bad: string[] = [];
    for (const r of recs) {
      // Never before its time: the spin ends at the due time, and the send's own stamp comes after.
      if (r.sent_ns < r.sched_ns) bad.push(`${r.request_no}: send stamp ${r.sched_ns - r.sent_ns} ns before its scheduled time`);
      const s = srv.stamps.get(r.request_no);
      if (s === undefined) { bad.push(`${r.request_no}: no server stamps`); continue; }
      if (r.sent_ns > s.arrived_ns) bad.push(`${r.request_no}: send stamp ${r.sent_ns - s.arrived_ns} ns after the server got it`);
      if (r.done_ns < s.written_ns) bad.push(`${r.request_no}: answer stamp before the server wrote it`);
    }
    expect(bad.slice(0, 10)).toEqual([]);
  } finally {
    await srv.close();
  }
}

for (const c of IO_CASES) describe.skipIf(c.skip !== null)(titled(`loadgen (--io ${c.io}) at a fixed rate with the early wake (--spin-us)`, c), () => {
  it('wakes ahead of each send and spins to it: no send stamped before its scheduled time, the timer\'s lateness reported', async () => {
    await checkEarlyWake(c.io);
  });
});

describe('loadgen --spin-us', () => {
  it('is refused in closed mode (nothing there waits for the clock)', async () => {
    await expect(runLoadgen(['--target', '127.0.0.1:1', '--repeat-get', '/', '--connections', '1', '--spin-us', '50'], 10_000)).rejects.toThrow(/--spin-us goes with --mode open only/);
  });

  // Checked before anything runs (no connection is made to the unused port).
  it.each([['1001', /--spin-us must be a number in \[0, 1000\]/], ['-1', /--spin-us must be a number in \[0, 1000\]/],
    ['1.5', /--spin-us must be a whole number/], ['abc', /--spin-us must be a number in \[0, 1000\]/]])('refuses --spin-us %s', async (value, message) => {
    await expect(runLoadgen(['--target', '127.0.0.1:1', '--repeat-get', '/', '--connections', '1', '--mode', 'open', '--rate', '100',
      '--duration-ms', '100', '--spin-us', value], 10_000)).rejects.toThrow(message);
  });
});
