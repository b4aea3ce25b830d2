// How native-bench/loadgen.c reads answers, on both of its backends (--io): io_uring (h22g: a
// multishot recv per lane into provided buffers) and epoll (h21g: edge-triggered, one recv per
// readiness into a shared buffer); an answer split across reads kept in the lane's own buffer, a
// peer's close seen even when it arrives with the last bytes. A scripted HTTP server on loopback (node:net)
// decides how the answer bytes arrive, which the real server never varies: split at every awkward
// place, bodies larger than the shared 64 KiB buffer, more ready sockets than one epoll_wait
// returns, two answers in one segment, a half answer followed by the close.
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Lane, textSegment } from '../../bench/load/lanes.js';
import { LOADGEN_BINARY, readRecordsFile, runLoadgen, writeRequestFile, type NativeReport } from '../../bench/load/native_generator.js';
import { headServer, loadgenIoCases, loadgenScratchDir, titled } from './loadgen_io.js';

const RUN_TIMEOUT_MS = 60_000;
const KIND_ORDER = 0;
const KIND_OTHER = 3;

const scratch = loadgenScratchDir('ringbook-loadgen-reads-');

/** A request names its lane and index, so the scripted server knows what to answer. */
function requestText(lane: number, i: number): string {
  return `GET /r/${lane}/${i} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
}

/** The records file holds every request's number (lane * 1000 + i, its X-Request-Id) exactly once. */
function expectEachRequestOnce(records: string, n_lanes: number, per_lane: number): void {
  const numbers = Array.from(readRecordsFile(records).request_no).sort((a, b) => a - b);
  const expected = Array.from({ length: n_lanes }, (_, l) => Array.from({ length: per_lane }, (_, i) => l * 1000 + i)).flat().sort((a, b) => a - b);
  expect(numbers).toEqual(expected);
}

function lanesOf(n_lanes: number, per_lane: number, kind: number): Lane[] {
  return Array.from({ length: n_lanes }, (_, l) => {
    const lane = new Lane(l);
    const texts = Array.from({ length: per_lane }, (_, i) => requestText(l, i));
    lane.add(textSegment(texts, new Uint8Array(per_lane).fill(kind)));
    return lane;
  });
}

type Answer = (lane: number, i: number, sock: net.Socket) => void;

/** A loopback HTTP/1.1 server that hands each complete request (GET /r/<lane>/<i>, no body) to `answer`. */
function scriptedServer(answer: Answer): Promise<{ port: number; close: () => Promise<void> }> {
  return headServer((head, sock) => {
    const m = /^GET \/r\/(\d+)\/(\d+) /.exec(head);
    if (m === null) throw new Error(`unexpected request ${head}`);
    answer(Number(m[1]), Number(m[2]), sock);
  });
}

function response(status: string, body: string, headers: string): string {
  return `HTTP/1.1 ${status}\r\n${headers}Content-Length: ${body.length}\r\n\r\n${body}`;
}

async function run(port: number, lanes: Lane[], io: string, extra: string[] = []): Promise<NativeReport> {
  const file = path.join(scratch(), `req-${port}.bin`);
  writeRequestFile(file, lanes);
  const rep = await runLoadgen(['--target', `127.0.0.1:${port}`, '--requests', file, '--until-empty', '--report-lanes', '--io', io, ...extra], RUN_TIMEOUT_MS);
  expect(rep.generator_io).toBe(io);
  return rep;
}

/** Like runLoadgen, with the child's pid (to stop it); killed after `timeout_ms`. */
function spawnLoadgen(args: string[], timeout_ms: number): { pid: number | undefined; report: Promise<NativeReport> } {
  const child = spawn(LOADGEN_BINARY, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill('SIGKILL');
  }, timeout_ms);
  const report = new Promise<NativeReport>((resolve, reject) => {
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (killed) reject(new Error(`loadgen still running after ${timeout_ms} ms (a hang: killed): ${err.trim()}`));
      else if (code !== 0) reject(new Error(`loadgen exited with ${code ?? signal}: ${err.trim()}`));
      else resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as NativeReport);
    });
  });
  return { pid: child.pid, report };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const IO_CASES = await loadgenIoCases();

for (const c of IO_CASES) describe.skipIf(c.skip !== null)(titled(`loadgen (--io ${c.io}) reads answers however their bytes arrive`, c), () => {
  const io = c.io;
  it('answers split at every awkward place (status line, header name, head end, body), bodies over the 64 KiB shared buffer, any header case', async () => {
    const LANES = 4;
    const PER_LANE = 12;
    const big = 'x'.repeat(150_000); // > READ_SHARED_BYTES (64 KiB) and > READ_BUF_INITIAL (16 KiB)
    const srv = await scriptedServer((lane, i, sock) => {
      const id = (lane * 1000 + i).toString(36);
      let text: string;
      switch (i % 4) {
        case 0: text = response('200 OK', '{"fills":[]}', `X-Request-Id: r-${id}\r\n`); break;
        case 1: text = response('200 OK', '{"fills":[{"price":"1"}]}', `x-request-id: r-${id}\r\nDate: today\r\n`).replace('Content-Length', 'content-LENGTH'); break;
        case 2: text = response('400 Bad Request', '{"error":"INSUFFICIENT_FUNDS"}', `X-Request-Id: r-${id}\r\n`); break;
        default: text = response('200 OK', `{"fills":[],"pad":"${big}"}`, `X-Request-Id: r-${id}\r\n`); break;
      }
      const head_end = text.indexOf('\r\n\r\n');
      // Cut points: inside "HTTP/1.1", inside the status code, inside a header name, between the
      // head's two CRLFs, inside the body.
      const cuts = [3, 10, text.indexOf('ength') + 2, head_end + 2, head_end + 4 + Math.floor((text.length - head_end - 4) / 2), text.length];
      void (async () => {
        let from = 0;
        for (const to of cuts) {
          if (to <= from) continue;
          sock.write(text.slice(from, to), 'latin1');
          from = to;
          await sleep(3);
        }
      })();
    });
    try {
      const lanes = lanesOf(LANES, PER_LANE, KIND_ORDER);
      const records = path.join(scratch(), 'split-records.bin');
      const rep = await run(srv.port, lanes, io, ['--records', records]);
      const n = LANES * PER_LANE;
      expect(rep.requests_sent).toBe(n);
      expect(rep.responses).toBe(n);
      expect([rep.unanswered, rep.socket_errors, rep.protocol_errors, rep.connections_closed, rep.unexpected_responses]).toEqual([0, 0, 0, 0, 0]);
      expect(rep.status_2xx).toBe((n * 3) / 4);
      expect(rep.status_4xx).toBe(n / 4);
      expect(rep.kinds.order.ok).toBe((n * 3) / 4);
      expect(rep.kinds.order.with_fills).toBe(n / 4); // only the i % 4 == 1 answers have fills
      expect(rep.kinds.order.rejects).toEqual({ INSUFFICIENT_FUNDS: n / 4 });
      // The answers did arrive in pieces: more reads with bytes than answers.
      expect(rep.reads).toBeGreaterThan(rep.responses);
      // io_uring: whether 64 provided buffers run out here depends on how far the kernel is ahead
      // of this generator's reads (a CI run on 2026-11-28 found none), so it is not asserted here;
      // the next describe runs them out for certain with --recv-buffers.
      // X-Request-Id (either case) read from split heads: every request's number, once.
      expectEachRequestOnce(records, lanes.length, PER_LANE);
    } finally {
      await srv.close();
    }
  });

  it('600 lanes answered at once (epoll: more ready sockets than one epoll_wait returns, 512): every answer of every round read', async () => {
    const LANES = 600;
    const ROUNDS = 5;
    // Hold each round's requests until every lane has sent its own, then answer all at once.
    let waiting: net.Socket[] = [];
    const srv = await scriptedServer((_lane, _i, sock) => {
      waiting.push(sock);
      if (waiting.length === LANES) {
        const all = waiting;
        waiting = [];
        for (const s of all) s.write(response('200 OK', '{"fills":[]}', ''), 'latin1');
      }
    });
    try {
      const lanes = lanesOf(LANES, ROUNDS, KIND_OTHER);
      const rep = await run(srv.port, lanes, io);
      expect(rep.responses).toBe(LANES * ROUNDS);
      expect(rep.status_2xx).toBe(LANES * ROUNDS);
      expect([rep.unanswered, rep.socket_errors, rep.protocol_errors, rep.connections_closed]).toEqual([0, 0, 0, 0]);
      expect(rep.lane_sent).toEqual(new Array(LANES).fill(ROUNDS));
      // Every answer came through an event (edge-triggered: none is re-reported while unread; io_uring: a recv completion each).
      expect(rep.epoll_events).toBeGreaterThanOrEqual(LANES * ROUNDS);
      expect(rep.reads).toBe(LANES * ROUNDS);
    } finally {
      await srv.close();
    }
  });

  it('two answers in one segment: the second counts as unexpected; a half answer then the close: lane closed at once, not at the drain timeout', async () => {
    let gen: ReturnType<typeof spawnLoadgen> | null = null;
    const srv = await scriptedServer((lane, i, sock) => {
      const ok = response('200 OK', '{"fills":[]}', '');
      if (lane === 0) {
        // Lane 0 (one request): two answers in one write; the second finds the lane idle.
        sock.write(ok + ok, 'latin1');
      } else if (i === 1) {
        // Lane 1: the second answer stops halfway and the server closes. The generator is stopped
        // meanwhile, so the bytes and the FIN are both queued when it next looks: one edge event
        // for both, and only EPOLLRDHUP tells it to read past the short read.
        const pid = gen?.pid;
        if (pid === undefined) throw new Error('generator not running');
        process.kill(pid, 'SIGSTOP');
        // 'finish': the bytes and the FIN (shutdown) are out, so on loopback both wait in the
        // generator's socket before it runs again (not a guessed 100 ms).
        sock.once('finish', () => process.kill(pid, 'SIGCONT'));
        sock.end(ok.slice(0, 30), 'latin1');
      } else {
        sock.write(ok, 'latin1');
      }
    });
    try {
      const lanes = [lanesOf(1, 1, KIND_OTHER)[0], lanesOf(2, 3, KIND_OTHER)[1]];
      const file = path.join(scratch(), 'close.bin');
      writeRequestFile(file, lanes);
      gen = spawnLoadgen(['--target', `127.0.0.1:${srv.port}`, '--requests', file, '--until-empty', '--report-lanes', '--drain-ms', '30000', '--io', io], 50_000);
      const rep = await gen.report;
      // Lane 0: answered (+1 unexpected); lane 1: the first answered, the second lost with the
      // connection, the third never sent.
      expect(rep.lane_sent).toEqual([1, 2]);
      expect(rep.responses).toBe(2);
      expect(rep.unexpected_responses).toBe(1);
      expect(rep.unanswered).toBe(1);
      expect(rep.connections_closed).toBe(1);
      expect(rep.protocol_errors).toBe(0);
      expect(rep.generator_io).toBe(io);
      // The close was seen when it came (EPOLLRDHUP with the last bytes): the run ended because
      // nothing was left to send or wait for, not by its DURATION_MS_MAX cap (ended_early), which
      // a lane left waiting on the lost answer would run into (the 50 s kill guards that hang).
      expect(rep.ended_early).toBe(false);
    } finally {
      await srv.close();
    }
  });
});

// The io_uring backend's multishot recv when the provided buffers run out: the kernel ends it with
// ENOBUFS (the bytes stay in the socket) and the generator must hand the buffers back and arm it
// again. With the default 64 buffers that happens only when the kernel gets far enough ahead of
// the generator (commit 742e2db took that assertion out), so here a run gets one or two buffers
// (--recv-buffers) and every answer is 16 KiB leaving the server in one write. Why that is
// certain, not timing: loopback carries a write in segments of up to its 64 KiB MSS, so an
// answer lands in the socket in pieces far larger than 2 KiB; the recv fills the buffers it has,
// finds the socket still not empty and needs another before the generator can return one (it is
// inside its io_uring_enter, where the recv runs, or stopped): ENOBUFS.
const URING = IO_CASES[0];
describe.skipIf(URING.skip !== null)(titled('loadgen (--io io_uring): a multishot recv that runs out of provided buffers is armed again and loses nothing', URING), () => {
  it.each([1, 2])('--recv-buffers %i: 16 KiB answers through 2 KiB buffers, every byte and answer read', async (buffers) => {
    const LANES = 4;
    const PER_LANE = 6;
    const BUF_BYTES = 2048; // URING_BUF_BYTES, loadgen_uring.h
    let written_bytes = 0;
    const srv = await scriptedServer((lane, i, sock) => {
      const id = (lane * 1000 + i).toString(36);
      // The body names its request, so an answer pieced together from the wrong bytes would not parse the same.
      const body = `{"fills":[],"pad":"${id.padEnd(16_384, '.')}"}`;
      const text = response('200 OK', body, `X-Request-Id: r-${id}\r\n`);
      written_bytes += Buffer.byteLength(text, 'latin1');
      sock.write(text, 'latin1'); // one write: the whole answer in the socket at once
    });
    try {
      const lanes = lanesOf(LANES, PER_LANE, KIND_ORDER);
      const records = path.join(scratch(), `rearm-${buffers}-records.bin`);
      const rep = await run(srv.port, lanes, 'io_uring', ['--recv-buffers', String(buffers), '--records', records]);
      const n = LANES * PER_LANE;
      expect(rep.io_uring_recv_buffers).toBe(buffers);
      expect([rep.requests_sent, rep.responses, rep.status_2xx]).toEqual([n, n, n]);
      expect([rep.unanswered, rep.socket_errors, rep.protocol_errors, rep.connections_closed, rep.unexpected_responses]).toEqual([0, 0, 0, 0, 0]);
      expect(rep.lane_sent).toEqual(new Array(LANES).fill(PER_LANE));
      // The buffers ran out, and each recv that ended for it was armed again.
      expect(rep.io_uring_recv_nobufs).toBeGreaterThan(0);
      expect(rep.io_uring_recv_rearms).toBeGreaterThanOrEqual(rep.io_uring_recv_nobufs ?? Infinity);
      // No byte lost or read twice: the generator read exactly what the server wrote, at most 2 KiB a recv.
      expect(rep.read_bytes).toBe(written_bytes);
      expect(rep.reads).toBeGreaterThanOrEqual(Math.ceil(written_bytes / BUF_BYTES));
      // Every answer once, with its own request's number (X-Request-Id).
      expectEachRequestOnce(records, lanes.length, PER_LANE);
    } finally {
      await srv.close();
    }
  });
});
