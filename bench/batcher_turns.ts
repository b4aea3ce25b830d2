// The signature batcher's cost per event-loop turn (issue 11: the front thread's signature path):
// instructions (callgrind) and bytes allocated, this build against another (the baseline
// /work/wt/start), driven the same way: each turn K signed requests go through checkSigners (the
// signed route's call, with the route's per-request objects: one message form tried, then a second
// for every `--second-every`th request),
// the batcher's end-of-turn flush hands them to a stub pool that answers at once (a resolved
// promise: no worker threads, so callgrind counts only the front's side). What differs between
// the builds is the batcher: its lists, callbacks and checkSigners' walk.
//
//   npx tsc -p tsconfig.json && node dist/bench/batcher_turns.js [--start /work/wt/start/dist]
//     --checks K per turn (default 1: light load, one request a turn; also try 16)
//     --second-every N (default 0: every request signed over its first form; 4: every 4th needs two)
//     --runs N bytes runs per build, the median quoted (default 5)
//     --no-callgrind: bytes only
//   node dist/bench/batcher_turns.js run --dist DIR --turns N ...: one measured process (what the
//     compare mode spawns: under `valgrind --tool=callgrind` for instructions, plain for bytes).
// Instructions per turn are (Ir at TURNS_LONG - Ir at TURNS_SHORT) / (TURNS_LONG - TURNS_SHORT),
// both after the same warm-up, so start-up and compilation cancel out. Bytes per check: V8's heap
// growth over the measured turns with a young generation large enough that no GC runs in between
// (a run where one did is reported as such and not used). Ends with ONE JSON line {"bench":"batcher_turns",...}.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Turns before measuring: V8 has optimized the batcher's and the driver's functions by then. */
const WARM_TURNS = 3000;
/** The two callgrind runs' measured turns (their difference is what is divided). */
const TURNS_SHORT = 1000;
const TURNS_LONG = 4000;
/** Measured requests of a bytes run (turns: this / checks): a few MB, inside the young generation set below. */
const BYTES_REQUESTS = 4000;
/** The young generation's semi-space for the bytes runs (MB): no scavenge in the window. */
const SEMI_SPACE_MB = 64;

interface BatcherLike {
  checkSigners(
    messages: readonly string[], signature_hex: string, address: string, others: readonly string[] | undefined,
    stamps: null, found: (message: string | null, failed: number, signer: string | null) => void,
  ): void;
  pending: number;
}
type BatcherClass = new (pool: unknown, batch_max: number) => BatcherLike;

/** A pool that answers every batch at once: a form verifies when it equals the signature. */
const stubPool = {
  taskSize: 100,
  idle: false,
  broken: null,
  stealLate: (): number => 0,
  checkOneHere: (): number => {
    throw new Error('no inline checks in this bench');
  },
  verifyBatch(items: readonly { message: string; signature_hex: string }[]): Promise<Uint8Array> {
    const out = new Uint8Array(items.length);
    for (let i = 0; i < items.length; i++) out[i] = items[i].message === items[i].signature_hex ? 1 : 0;
    return Promise.resolve(out);
  },
};

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : process.argv[i + 1];
}

function intArg(name: string, fallback: number, min: number, max: number): number {
  const v = Number(arg(name, String(fallback)));
  if (!Number.isInteger(v) || v < min || v > max) throw new Error(`${name}: an integer in [${min}, ${max}]`);
  return v;
}

async function runOne(): Promise<void> {
  const dist = arg('--dist', '');
  const turns = intArg('--turns', 1000, 1, 1_000_000);
  const checks = intArg('--checks', 1, 1, 1000);
  const second_every = intArg('--second-every', 0, 0, 1000);
  const mod = (await import(pathToFileURL(path.join(dist, 'src/gateway/signature_batcher.js')).href)) as { SignatureBatcher: BatcherClass };
  const b = new mod.SignatureBatcher(stubPool, 1000);
  // Per request, as the signed route makes them: its forms, its signature (new strings: young
  // objects, so a batcher that stores them into long-lived objects pays V8's write barrier) and its
  // own `found` closure.
  let found_count = 0;
  let turn_no = 0;
  const turn = (): Promise<void> => {
    const t = turn_no++;
    for (let i = 0; i < checks; i++) {
      const forms = [`{"order":${i},"turn":${t}}`, `ringbook:order:${i}:${t}`];
      const sig = second_every > 0 && i % second_every === 0 ? `ringbook:order:${i}:${t}` : `{"order":${i},"turn":${t}}`;
      b.checkSigners(forms, sig, '0xabc', undefined, null, (message) => {
        if (message !== null && t >= 0) found_count++;
      });
    }
    return new Promise((r) => setImmediate(r));
  };
  for (let t = 0; t < WARM_TURNS; t++) await turn();
  let gcs = 0;
  const obs = new PerformanceObserver((list) => {
    gcs += list.getEntries().length;
  });
  obs.observe({ entryTypes: ['gc'] });
  const found_before = found_count;
  const heap_before = process.memoryUsage().heapUsed;
  for (let t = 0; t < turns; t++) await turn();
  // The second forms asked in the last turn are answered in the next: let them finish.
  await turn();
  const heap_after = process.memoryUsage().heapUsed;
  await new Promise((r) => setTimeout(r, 20)); // the gc entries are delivered asynchronously
  obs.disconnect();
  const requests = turns * checks; // + the extra turn's, counted in neither bytes nor found below
  console.log(JSON.stringify({
    mode: 'run', turns, checks, found: found_count - found_before, pending: b.pending, gcs,
    bytes_per_request: gcs === 0 ? (heap_after - heap_before) / requests : null,
  }));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function spawnRun(cmd: string, args: string[]): { stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  return { stdout: r.stdout, stderr: r.stderr };
}

function lastJson(text: string): Record<string, unknown> {
  const lines = text.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as Record<string, unknown>;
}

/** Ir of one whole process run under callgrind (the "Collected" total). */
function callgrindIr(self: string, dist: string, turns: number, common: string[]): number {
  const out = path.join(process.env.TMPDIR ?? '/tmp', `batcher_turns.${process.pid}.callgrind`);
  const r = spawnRun('valgrind', [
    '--tool=callgrind', `--callgrind-out-file=${out}`, 'node', '--predictable', self, 'run', '--dist', dist, '--turns', String(turns), ...common,
  ]);
  const m = /Collected : (\d+)/.exec(r.stderr);
  if (m === null) throw new Error('no callgrind total in its output');
  return Number(m[1]);
}

async function compare(): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const here = path.resolve(path.dirname(self), '..'); // dist/bench/x.js -> dist
  const builds: Record<string, string> = { this: here, start: path.resolve(arg('--start', '/work/wt/start/dist')) };
  const checks = intArg('--checks', 1, 1, 1000);
  const second_every = intArg('--second-every', 0, 0, 1000);
  const runs = intArg('--runs', 5, 1, 51);
  const with_callgrind = !process.argv.includes('--no-callgrind');
  const common = ['--checks', String(checks), '--second-every', String(second_every)];
  const result: Record<string, Record<string, number | null>> = {};
  for (const [name, dist] of Object.entries(builds)) {
    const bytes: number[] = [];
    let gc_runs = 0;
    for (let r = 0; r < runs; r++) {
      const j = lastJson(spawnRun(process.execPath, [
        `--min-semi-space-size=${SEMI_SPACE_MB}`, `--max-semi-space-size=${SEMI_SPACE_MB}`, self, 'run', '--dist', dist,
        '--turns', String(Math.ceil(BYTES_REQUESTS / checks)), ...common,
      ]).stdout);
      if (j.bytes_per_request === null) gc_runs++;
      else bytes.push(j.bytes_per_request as number);
    }
    let ir_per_turn: number | null = null;
    if (with_callgrind) {
      const short = callgrindIr(self, dist, TURNS_SHORT, common);
      const long = callgrindIr(self, dist, TURNS_LONG, common);
      ir_per_turn = Math.round((long - short) / (TURNS_LONG - TURNS_SHORT));
    }
    result[name] = { bytes_per_request: bytes.length > 0 ? Math.round(median(bytes)) : null, runs_with_gc: gc_runs, ir_per_turn };
    console.error(`${name} (${dist}): ${JSON.stringify(result[name])}`);
  }
  const t = result.this;
  const s = result.start;
  const delta = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : a - b);
  console.log(JSON.stringify({
    bench: 'batcher_turns', checks_per_turn: checks, second_every, runs, this: t, start: s,
    bytes_per_request_delta: delta(t.bytes_per_request, s.bytes_per_request),
    ir_per_turn_delta: delta(t.ir_per_turn, s.ir_per_turn),
    ir_per_turn_delta_pct: t.ir_per_turn === null || s.ir_per_turn === null ? null : Math.round(1000 * (t.ir_per_turn - s.ir_per_turn) / s.ir_per_turn) / 10,
  }));
}

if (process.argv[2] === 'run') await runOne();
else await compare();
