// The matcher thread's fixed cost per batch at light load (issue 11, docs/benchmarks.md "h23m"):
// the real matcher thread (a build's compiled src/matcher/matcher_worker.js, journal on, in a
// temporary directory) fed one request at a time by this thread, which waits for the batch's
// commit marker and then ~`gap-ms` before the next: batches of one request, the matcher asleep on
// the request ring between them, as at 1,000 requests/s. No HTTP, no verify pool, no read model:
// what is left is the matcher loop, the engine's apply of a deposit, the write-ahead record and
// the journal's between-batch checks. Reports, for the timed part (after `--warmup` batches), the
// matcher thread's CPU per batch (schedstat running time; stat user/system), its voluntary
// context switches per batch and, with `--strace`, its syscalls per batch by name (`strace -c -p`
// on that thread only; strace slows it: counts, not times). `--worker F` runs another build's
// compiled matcher_worker.js (A/B: `--worker /work/wt/start/dist/src/matcher/matcher_worker.js`);
// the ring layout must be the same (it is asserted at attach).
//
// Instruction counts (this machine has no hardware counters): run it twice under
// `valgrind --tool=callgrind --separate-threads=yes` with `--no-journal` (LMDB's 64 GB map fails
// under valgrind) and two `--batches` values, and difference the matcher thread's Ir (the thread
// whose file names matcher_worker.js's loop: the one with the most Ir after the main thread). Or,
// less noisy, one run with `valgrind --collect-atstart=no` and `--callgrind-window`: only the timed
// part is counted (callgrind_control -i on/off around it), Ir per batch = the thread's Ir / batches.
//
// `--parent-dir /dev/shm` puts the journal on tmpfs, where the O_DSYNC write is nearly free: what is
// left is the loop's own CPU per batch, with far less of the disk's noise.
//
//   npx tsc -p tsconfig.json && node dist/bench/journal_matcher_loop.js [--batches N] [--warmup W] [--gap-ms G] [--strace] [--worker F] [--parent-dir D]
// Ends with ONE JSON line {"bench":"journal_matcher_loop",...}.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { benchConfig } from './flow.js';
import { Knobs } from './knobs.js';
import { clockTicks } from './load/server_child.js';
import { EV_TYPE_WORD, EventType } from '../src/ring/event_records.js';
import { createRecordRing } from '../src/ring/records.js';
import { RequestWriter } from '../src/ring/request_records.js';
import { emptyRequest, RequestKind } from '../src/engine/types.js';
import type { FromMatcher, MatcherWorkerData } from '../src/matcher/matcher_worker.js';
import { logSettings } from '../src/util/log.js';
import { parseStraceTable } from './load/strace_table.js';

const knobs = new Knobs();
const batches = knobs.number('batches', 2000, 1, 1_000_000, { integer: true });
const warmup = knobs.number('warmup', 600, 0, 1_000_000, { integer: true });
const gap_ms = knobs.number('gap-ms', 1, 0, 1000);
const use_strace = knobs.flag('strace');
const worker_asked = knobs.optionalString('worker');
/** Where the journal's temporary directory goes: /dev/shm (tmpfs) makes the durable write nearly free, leaving the loop's own cost. */
const parent_dir = knobs.string('parent-dir', os.tmpdir());
/** No journal (journal_dir null): the loop, the rings and the engine only (runs under valgrind, which cannot map LMDB's 64 GB). */
const no_journal = knobs.flag('no-journal');
/** Under callgrind started with --collect-atstart=no: collect only during the timed part (callgrind_control -i on/off). */
const callgrind_window = knobs.flag('callgrind-window');
knobs.finish();

const worker_file = worker_asked === undefined
  ? new URL('../src/matcher/matcher_worker.js', import.meta.url)
  : pathToFileURL(path.resolve(worker_asked));
const dir = fs.mkdtempSync(path.join(parent_dir, 'ringbook-matcher-loop-'));
const requests = createRecordRing(1024);
const events = createRecordRing(4096);
const writer = new RequestWriter(requests);
const data: MatcherWorkerData = {
  engine_config: benchConfig(), request_sab: requests.sab, event_sab: events.sab, batch_requests_max: 256,
  journal_dir: no_journal ? null : dir, journal_fault_file: null, snapshot: null, snapshot_every_batches: 0, clock_offset_ms: 0,
  stamp_batches: false, cpu: null, log: logSettings(),
};
const worker = new Worker(worker_file, { workerData: data });
const messages: FromMatcher[] = [];
let stopped: (() => void) | null = null;
worker.on('message', (m: FromMatcher) => {
  messages.push(m);
  if (m.type === 'stopped') stopped?.();
});
worker.on('error', (e) => {
  console.error(e);
  process.exit(1);
});
await new Promise<void>((resolve) => {
  const look = (): void => {
    if (messages.some((m) => m.type === 'ready')) resolve();
    else setTimeout(look, 5);
  };
  look();
});

interface ThreadNumbers { run_ns: number; utime_ticks: number; stime_ticks: number; voluntary: number }

/** This process's thread named `comm` (nameThisThread). */
function tidOf(comm: string): number | null {
  for (const t of fs.readdirSync('/proc/self/task')) {
    try {
      if (fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim() === comm) return Number(t);
    } catch {
      // gone
    }
  }
  return null;
}

function sample(tid: number | null): ThreadNumbers {
  if (tid === null) return { run_ns: 0, utime_ticks: 0, stime_ticks: 0, voluntary: 0 };
  const base = `/proc/self/task/${tid}`;
  const stat = fs.readFileSync(`${base}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).trim().split(' ');
  const vol = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(fs.readFileSync(`${base}/status`, 'utf8'));
  return {
    run_ns: Number(fs.readFileSync(`${base}/schedstat`, 'utf8').split(' ')[0]),
    utime_ticks: Number(f[11]), stime_ticks: Number(f[12]), voluntary: vol === null ? 0 : Number(vol[1]),
  };
}

const address = new Uint8Array(20).fill(0x11);
const deposit = emptyRequest();
deposit.kind = RequestKind.DEPOSIT;
deposit.asset = 2;
deposit.amount_units = 1_000_000;
const pause = new Int32Array(new SharedArrayBuffer(4));
let seq = 0;
let committed = 0;

/** Writes one deposit and waits for the batch that holds it to be committed. */
function oneBatch(): void {
  seq++;
  deposit.nonce = seq;
  if (!writer.tryWrite(seq, address, 0, deposit)) throw new Error('request ring full');
  writer.flush();
  for (;;) {
    const n = events.waitForData(1000);
    let done = false;
    for (let i = 0; i < n; i++) {
      if (events.i32[events.slotOffset(i) + EV_TYPE_WORD] === EventType.BATCH_COMMITTED) {
        committed++;
        done = true;
      }
    }
    events.release(n);
    if (done) return;
  }
}

for (let i = 0; i < warmup; i++) {
  oneBatch();
  if (gap_ms > 0) Atomics.wait(pause, 0, 0, gap_ms);
}
const matcher_tid = tidOf('rb-matcher');
if (matcher_tid === null) throw new Error('no rb-matcher thread');
let strace_text = '';
const strace = use_strace ? spawn('strace', ['-c', '-p', String(matcher_tid)], { stdio: ['ignore', 'ignore', 'pipe'] }) : null;
strace?.stderr?.setEncoding('utf8');
strace?.stderr?.on('data', (d: string) => (strace_text += d));
if (strace !== null) await new Promise((r) => setTimeout(r, 300)); // attached
if (callgrind_window) spawnSync('callgrind_control', ['-i', 'on', String(process.pid)], { stdio: 'ignore' });
const committed0 = committed;
const m0 = sample(matcher_tid);
const s0 = sample(tidOf('rb-storer'));
const t0 = performance.now();
for (let i = 0; i < batches; i++) {
  oneBatch();
  if (gap_ms > 0) Atomics.wait(pause, 0, 0, gap_ms);
}
const wall_ms = performance.now() - t0;
if (callgrind_window) spawnSync('callgrind_control', ['-i', 'off', String(process.pid)], { stdio: 'ignore' });
const m1 = sample(matcher_tid);
const s1 = sample(tidOf('rb-storer'));
const measured = committed - committed0;
if (strace !== null) {
  const exited = new Promise((r) => strace.once('exit', r));
  strace.kill('SIGINT');
  await exited;
}
await new Promise<void>((resolve) => {
  stopped = resolve;
  requests.close();
});
await worker.terminate();
fs.rmSync(dir, { recursive: true, force: true });

const tick_us = 1e6 / clockTicks();
const r2 = (x: number): number => Math.round(x * 100) / 100;
const per = (x: number): number => r2(x / Math.max(1, measured));
const syscalls = use_strace ? Object.fromEntries(Object.entries(parseStraceTable(strace_text)).map(([k, v]) => [k, per(v)])) : null;
const out = {
  bench: 'journal_matcher_loop', worker: worker_asked ?? null, parent_dir, no_journal, batches: measured, warmup, gap_ms,
  matcher_run_us_per_batch: r2((m1.run_ns - m0.run_ns) / 1000 / Math.max(1, measured)),
  matcher_user_us_per_batch: per((m1.utime_ticks - m0.utime_ticks) * tick_us),
  matcher_system_us_per_batch: per((m1.stime_ticks - m0.stime_ticks) * tick_us),
  matcher_voluntary_switches_per_batch: per(m1.voluntary - m0.voluntary),
  storer_run_us_per_batch: r2((s1.run_ns - s0.run_ns) / 1000 / Math.max(1, measured)),
  ms_per_batch: r2(wall_ms / Math.max(1, measured)),
  syscalls_per_batch: syscalls,
};
console.log(`journal_matcher_loop: ${measured} one-request batches, one per ~${gap_ms} ms: matcher ${out.matcher_run_us_per_batch} us running per batch ` +
  `(user ${out.matcher_user_us_per_batch}, system ${out.matcher_system_us_per_batch}), ${out.matcher_voluntary_switches_per_batch} sleeps per batch` +
  (syscalls === null ? '' : `; syscalls per batch ${JSON.stringify(syscalls)}`));
console.log(JSON.stringify(out));
