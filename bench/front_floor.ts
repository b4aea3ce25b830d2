// The front's floor (issue 11): a bare uWS server (bench/front_floor_server.ts: the project's
// uWebSockets.js, the gateway's App and listen set-up, each POST body read whole and answered with
// a fixed 200 of the real order answer's size) driven by the load bench's native generator with
// the load bench's signed-order bodies and connection count, at max rate (closed loop) and at a
// fixed rate (open loop, 1,000/s). Reports the bare server's CPU per answered request (user + sys
// of the child from /proc, split by thread: the main thread is the one that runs uWS), the same
// convention as the load bench's `server_cpu_us_per_request_by_thread` (CPU over the phase /
// answers inside its window). The gap between that and the real front thread's figure is what
// Ringbook's JS front costs above uWS, V8's callbacks and the kernel's loopback TCP
// (docs/benchmarks.md, section h22f).
//
//   npx tsc -p tsconfig.json && node dist/bench/front_floor.js
//     --wallets N (default 4000), --connections N (default 256: the load bench's)
//     --seconds S per timed phase (default 4), --runs N max-rate runs, the median quoted (default 3)
//     --rate R the fixed-rate phase (default 1000)
//     --signed-per-lane N requests signed per lane (default 24), --lane-requests N the lane's
//                 requests repeated up to N (default 800; the bare server checks no nonce, so a
//                 signed body may be sent again and the signing stays a few seconds)
// Needs native-bench/build/loadgen (`make native`). Ends with ONE JSON line {"bench":"front_floor",...}.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Knobs } from './knobs.js';
import { lightPhaseArgs } from './load/args.js';
import { Lane, type Segment } from './load/lanes.js';
import { chooseGenerator, type Generator } from './load/native_generator.js';
import { cpuDelta, sampleProc, type CpuDelta } from './load/server_child.js';
import { SIGN_BUDGET_MS, Signers } from './load/signers.js';
import { f1, int, machineLoad, pct } from './load/text.js';
import { medianMeanOfMiddleTwo } from './quantile.js';
import type { PhaseResult } from './load/lanes.js';

/** How long the child may take to print its port. */
const CHILD_START_MS = 10_000;

interface Child {
  proc: ChildProcess;
  pid: number;
  port: number;
}

function startChild(js: string): Promise<Child> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [js], { stdio: ['pipe', 'pipe', 'inherit'] });
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error('bare server: no port within 10 s'));
    }, CHILD_START_MS);
    let out = '';
    proc.stdout?.setEncoding('utf8');
    proc.stdout?.on('data', (d: string) => {
      out += d;
      const m = /port (\d+)/.exec(out);
      if (m !== null && proc.pid !== undefined) {
        clearTimeout(timer);
        resolve({ proc, pid: proc.pid, port: Number(m[1]) });
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`bare server exited (${code})`));
    });
  });
}

/** Each lane's signed requests as one segment (bytes copied once), to be repeated. */
function laneSegments(lanes: Lane[]): Segment[] {
  return lanes.map((l) => {
    const reqs = [...l.pending()];
    const offsets = new Uint32Array(reqs.length + 1);
    let at = 0;
    reqs.forEach((r, j) => {
      offsets[j] = at;
      at += r.bytes.length;
    });
    offsets[reqs.length] = at;
    return { buf: Buffer.concat(reqs.map((r) => r.bytes), at), offsets, kinds: Uint8Array.from(reqs.map((r) => r.kind)) };
  });
}

/** Fresh lanes holding each segment repeated up to `per_lane` requests. */
function repeatedLanes(segs: Segment[], per_lane: number): Lane[] {
  return segs.map((s, i) => {
    const lane = new Lane(i);
    const n = s.kinds.length;
    for (let k = 0; n > 0 && k * n < per_lane; k++) lane.add(s);
    return lane;
  });
}

interface Phase {
  result: PhaseResult;
  cpu: CpuDelta | null;
  requests_per_s: number;
  cpu_us_per_request: number;
  main_us_per_request: number;
  other_threads_us_per_request: number;
  generator_us_per_request: number;
}

async function phase(gen: Generator, child: Child, lanes: Lane[], mode: 'closed' | 'open', seconds: number, rate?: number): Promise<Phase> {
  const s0 = sampleProc(child.pid);
  const result = await gen.runPhase({ port: child.port, lanes, mode, duration_ms: seconds * 1000, ...(rate === undefined ? {} : { rate }) });
  const cpu = cpuDelta(s0, sampleProc(child.pid));
  const answered = Math.max(1, result.in_window.responses);
  // Threads summed from their own rows (the process's row and the threads' are read at slightly
  // different instants: their difference is clock-tick noise, not a thread).
  const main_ms = cpu?.threads.find((t) => t.tid === child.pid)?.cpu_ms ?? 0;
  const all_ms = cpu?.threads.reduce((s, t) => s + t.cpu_ms, 0) ?? 0;
  return {
    result, cpu,
    requests_per_s: result.in_window.responses / (result.window_ms / 1000),
    cpu_us_per_request: (all_ms * 1000) / answered,
    main_us_per_request: (main_ms * 1000) / answered,
    other_threads_us_per_request: ((all_ms - main_ms) * 1000) / answered,
    generator_us_per_request: ((result.generator_cpu_ms ?? 0) * 1000) / answered,
  };
}

const r1 = (x: number): number => Math.round(x * 10) / 10;

function line(name: string, p: Phase): string {
  const lat = p.result.latency;
  return `${name}: ${int(p.requests_per_s)} requests/s, bare server ${f1(p.cpu_us_per_request)} us CPU per request ` +
    `(main thread ${f1(p.main_us_per_request)}, other threads ${f1(p.other_threads_us_per_request)}; ${f1(p.cpu?.pct ?? 0)}% of a core), ` +
    `generator ${f1(p.generator_us_per_request)} us; latency p50 ${pct(lat, 50)} ms p99 ${pct(lat, 99)} ms` +
    (p.result.unanswered + p.result.socket_errors > 0 ? `; unanswered ${p.result.unanswered}, socket errors ${p.result.socket_errors}` : '');
}

async function main(): Promise<void> {
  const knobs = new Knobs();
  const wallets = knobs.number('wallets', 4000, 16, 100_000);
  const connections = knobs.number('connections', 256, 1, 4096);
  const seconds = knobs.number('seconds', 4, 0.5, 60, { integer: false });
  const runs = knobs.number('runs', 3, 1, 9);
  const rate = knobs.number('rate', 1000, 1, 200_000);
  const signed_per_lane = knobs.number('signed-per-lane', 24, 1, 10_000);
  const lane_requests = knobs.number('lane-requests', 800, 1, 100_000);
  knobs.finish();
  if (connections > wallets) throw new RangeError('--connections must not exceed --wallets (each lane owns its wallets)');
  const say = (s = ''): void => console.log(s);
  const gen = chooseGenerator('native');
  const here = path.dirname(fileURLToPath(import.meta.url));
  say(`front_floor: bare uWS server, ${connections} connections, ${wallets} wallets, ${machineLoad()}`);

  const signers = new Signers(lightPhaseArgs({ wallets, connections, seconds, rate, seed: 'ringbook-load-1' }));
  let child: Child | null = null;
  try {
    await signers.ready;
    await signers.ensurePerLane(signed_per_lane, SIGN_BUDGET_MS);
    const segs = laneSegments(signers.lanes);
    const body_bytes = segs.reduce((s, x) => s + x.buf.length, 0) / Math.max(1, segs.reduce((s, x) => s + x.kinds.length, 0));
    say(`signed ${int(signers.signed)} requests (${f1(body_bytes)} B per request on the wire), each lane's repeated up to ${lane_requests}`);
    child = await startChild(path.join(here, 'front_floor_server.js'));
    say(`bare server: pid ${child.pid}, port ${child.port}`);

    await phase(gen, child, repeatedLanes(segs, lane_requests), 'closed', 1); // warm-up: JIT, connections
    const max: Phase[] = [];
    for (let r = 0; r < runs; r++) {
      const p = await phase(gen, child, repeatedLanes(segs, lane_requests), 'closed', seconds);
      say(line(`max rate, run ${r + 1}`, p));
      max.push(p);
    }
    const fixed = await phase(gen, child, repeatedLanes(segs, Math.ceil((rate * seconds) / connections) + 2), 'open', seconds, rate);
    say(line(`${int(rate)}/s`, fixed));
    const med = (f: (p: Phase) => number): number => r1(medianMeanOfMiddleTwo(max.map(f)));
    console.log(JSON.stringify({
      bench: 'front_floor',
      bare_server_cpu_us_per_request: med((p) => p.cpu_us_per_request),
      bare_server_cpu_us_per_request_by_thread: { main: med((p) => p.main_us_per_request), other: med((p) => p.other_threads_us_per_request) },
      requests_per_s: Math.round(medianMeanOfMiddleTwo(max.map((p) => p.requests_per_s))),
      max_runs_cpu_us_per_request: max.map((p) => r1(p.cpu_us_per_request)),
      generator_cpu_us_per_request: med((p) => p.generator_us_per_request),
      [`bare_server_cpu_us_per_request_at_${rate}`]: r1(fixed.cpu_us_per_request),
      [`bare_server_cpu_us_per_request_by_thread_at_${rate}`]: { main: r1(fixed.main_us_per_request), other: r1(fixed.other_threads_us_per_request) },
      [`p50_ms_at_${rate}`]: pct(fixed.result.latency, 50),
      [`p99_ms_at_${rate}`]: pct(fixed.result.latency, 99),
      connections, wallets, seconds, runs, request_bytes: Math.round(body_bytes),
    }));
  } finally {
    if (child !== null) {
      child.proc.stdin?.end();
      child.proc.kill('SIGTERM');
    }
    await signers.close();
  }
}

main().catch((e: unknown) => {
  console.error('front_floor: failed:', e instanceof Error ? e.message : e);
  process.exit(1);
});
