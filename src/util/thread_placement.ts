// Thread placement (config threads.pipeline_cpu; docs/operations.md "Thread placement"): the front
// (the process's main thread) and the matcher thread share one CPU, and every other thread of the
// server (verify workers, the DA worker, the journal's storer, the snapshot writer, V8's and
// libuv's helpers) runs on the process's other CPUs.
//
// Why: at light load every step of a request wakes a sleeping thread, and on a VM a wake-up of a
// thread on another vCPU costs the waker ~14-16 µs and the sleeper runs ~50 µs later, against ~4-5
// and ~8 µs on the waker's own CPU (native-bench/wake_cost). The front and the matcher wake each
// other for every batch (the request ring's doorbell, the event ring's bell); on one CPU those
// wakes are cheap, and the matcher never waits behind a verify worker's or the DA worker's burst
// for a core: at 1,000 requests/s on 2 vCPUs its batch_wait p99 went from 1.2-2.6 ms to 0.24-0.32
// ms and the client's p99 from a median 4.29 to 3.09 ms over five alternated load-bench pairs,
// throughput at max rate level (docs/benchmarks.md, "Thread placement").
//
// Mechanism: a sweep over /proc/self/task sets each thread's affinity (sched_setaffinity through
// native/build/thread_slice.node) when it differs from its place: the main thread and the thread
// named rb-matcher on the pipeline CPU, every other thread on the rest. Threads started later
// inherit their creator's CPUs: a verify worker Piscina starts in place of a dead one is created by
// the front, so it would run on the pipeline CPU (its whole boot included) until a sweep moved it.
// Its pool asks for a sweep at once (placeNewThreads); for the rest (lmdb-js's threads, V8's) the
// sweep runs again every PLACEMENT_SWEEP_MS. Never throws: a failure is logged, and the threads
// then run where the kernel puts them.
import { readdirSync, readFileSync } from 'node:fs';
import { findNativeModule } from './native_module.js';
import { componentLog } from './log.js';
import { THREAD_NAMES } from './thread_name.js';

const log = componentLog('threads');

/** How often the placement is swept again for threads started since (a new thread runs on its creator's CPUs until then). */
export const PLACEMENT_SWEEP_MS = 5_000;
/** errno of a thread that ended between the listing and the call. */
const ESRCH = 3;

/** What native/build/thread_slice.node offers for affinity. */
export interface NativeAffinity {
  getAffinity(tid: number): { errno: number; cpus?: number[] };
  setAffinity(tid: number, cpus: number[]): number;
  strerror(errno: number): string;
}

export interface PlacementPlan {
  /** The front's and the matcher's CPU. */
  pipeline: number[];
  /** Every other thread's CPUs. */
  others: number[];
}

/** The plan for `pipeline_cpu` among the CPUs the process may use, or why there is none. */
export function placementPlan(pipeline_cpu: number, allowed: readonly number[]): PlacementPlan | string {
  if (!allowed.includes(pipeline_cpu)) return `CPU ${pipeline_cpu} is not among the CPUs this process may use (${allowed.join(',')})`;
  const others = allowed.filter((c) => c !== pipeline_cpu);
  if (others.length === 0) return `the process may use CPU ${pipeline_cpu} only: there is no other CPU for the other threads`;
  return { pipeline: [pipeline_cpu], others };
}

/** Whether a thread belongs on the pipeline CPU: the process's main thread (the front) and the matcher. */
export function onPipeline(tid: number, pid: number, comm: string): boolean {
  return tid === pid || comm === THREAD_NAMES.matcher;
}

function sameCpus(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((c, i) => c === b[i]);
}

export class ThreadPlacer {
  sweeps = 0;
  /** Threads whose CPUs a sweep changed, over all sweeps. */
  moved = 0;
  /** Calls the kernel refused (other than for a thread that had ended). */
  failed = 0;
  /** Sweeps asked for by a creator of a thread just started (placeNewThreads), not the timer's. */
  new_thread_sweeps = 0;
  private timer: NodeJS.Timeout | null = null;
  /**
   * Threads a sweep found in place or placed: later sweeps skip them (the sweep runs on the front
   * thread: ~27 µs per thread checked, so a full pass over ~30 threads every 5 s would be ~0.8 ms
   * of the front's time each time). Pruned of ended threads each sweep; a thread id reused within
   * one sweep interval would be taken for its predecessor (Linux hands out thread ids in order).
   */
  private readonly placed = new Set<number>();

  constructor(readonly plan: PlacementPlan, private readonly native: NativeAffinity, private readonly pid: number = process.pid) {}

  /** Places every thread of the process now; returns this sweep's counts and its first failure. */
  sweep(): { threads: number; moved: number; failed: number; first_failure: string | null } {
    this.sweeps++;
    let threads = 0;
    let moved = 0;
    let failed = 0;
    let first_failure: string | null = null;
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${this.pid}/task`);
    } catch (e) {
      this.failed++;
      return { threads: 0, moved: 0, failed: 1, first_failure: `/proc/${this.pid}/task: ${e instanceof Error ? e.message : String(e)}` };
    }
    const listed = new Set<number>();
    for (const name of tids) {
      const tid = Number(name);
      listed.add(tid);
      if (this.placed.has(tid)) {
        threads++;
        continue;
      }
      let comm: string;
      try {
        comm = readFileSync(`/proc/${this.pid}/task/${name}/comm`, 'utf8').trim();
      } catch {
        continue; // ended since the listing
      }
      threads++;
      const want = onPipeline(tid, this.pid, comm) ? this.plan.pipeline : this.plan.others;
      const now = this.native.getAffinity(tid);
      if (now.errno === ESRCH) continue;
      if (now.errno === 0 && sameCpus(now.cpus ?? [], want)) {
        this.placed.add(tid);
        continue;
      }
      const err = this.native.setAffinity(tid, want);
      if (err === 0) {
        moved++;
        this.placed.add(tid);
      } else if (err !== ESRCH) {
        failed++; // tried again at the next sweep
        first_failure ??= `thread ${tid} (${comm}): sched_setaffinity: ${this.native.strerror(err)}`;
      }
    }
    for (const tid of this.placed) if (!listed.has(tid)) this.placed.delete(tid);
    this.moved += moved;
    this.failed += failed;
    return { threads, moved, failed, first_failure };
  }

  /** Sweeps again every `every_ms` (the timer does not keep the process alive). */
  keepPlacing(every_ms: number = PLACEMENT_SWEEP_MS): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => this.sweepLogged(), every_ms);
    this.timer.unref();
  }

  /** A sweep for a thread just started (placeNewThreads): counted apart from the timer's. */
  sweepNewThreads(): void {
    this.new_thread_sweeps++;
    this.sweepLogged();
  }

  /** A later sweep: logs the first refusal of the process's placement (later ones are counted only). */
  private sweepLogged(): void {
    const r = this.sweep();
    if (r.failed > 0 && this.failed === r.failed) log.warn(`ringbook: thread placement: ${r.first_failure ?? '?'}`);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}

/** What GET /admin/state reports (null: threads.pipeline_cpu is off, or the placement could not start). */
export interface PlacementState {
  pipeline_cpus: number[];
  other_cpus: number[];
  sweeps: number;
  /** Threads moved over all sweeps (a thread started since the last sweep is moved by the next). */
  moved: number;
  failed: number;
  /** Sweeps run at once for a thread just started (a verify worker replaced), beside the first and the timer's. */
  new_thread_sweeps: number;
}

/** The process's one placer (the front's), once started. */
let running: ThreadPlacer | null = null;

export function placementState(): PlacementState | null {
  if (running === null) return null;
  const { plan, sweeps, moved, failed, new_thread_sweeps } = running;
  return { pipeline_cpus: [...plan.pipeline], other_cpus: [...plan.others], sweeps, moved, failed, new_thread_sweeps };
}

/**
 * A thread was just started after the server's start (the verify pool's replacement for a dead
 * worker): placed now rather than at the next timed sweep, up to PLACEMENT_SWEEP_MS later, during
 * which it would run on its creator's CPUs (the front's: the pipeline CPU). Nothing when placement
 * is off, or on a thread other than the placer's (each isolate has its own `running`: null in a
 * worker). A sweep costs ~27 µs per thread it has not seen placed, so one new thread is cheap.
 */
export function placeNewThreads(): void {
  running?.sweepNewThreads();
}

/**
 * Applies config threads.pipeline_cpu (null: nothing is called) and keeps it applied; returns the
 * placer, or null when off or impossible here (logged: the threads then run where the kernel puts
 * them).
 */
export function startThreadPlacement(pipeline_cpu: number | null): ThreadPlacer | null {
  if (pipeline_cpu === null) return null;
  const not = (why: string): null => {
    log.warn(`ringbook: threads.pipeline_cpu ${pipeline_cpu}: threads not placed: ${why}`);
    return null;
  };
  if (process.platform !== 'linux') return not(`thread placement needs Linux (this is ${process.platform})`);
  const found = findNativeModule<NativeAffinity>('thread_slice.node');
  if ('absent' in found) return not(found.absent);
  const native = found.module;
  if (typeof native.setAffinity !== 'function') return not('native/build/thread_slice.node predates setAffinity: run `make native`');
  const allowed = native.getAffinity(process.pid);
  if (allowed.errno !== 0) return not(`sched_getaffinity: ${native.strerror(allowed.errno)}`);
  const plan = placementPlan(pipeline_cpu, allowed.cpus ?? []);
  if (typeof plan === 'string') return not(plan);
  const placer = new ThreadPlacer(plan, native);
  const r = placer.sweep();
  const line = `ringbook: threads placed: the front and the matcher on CPU ${plan.pipeline.join(',')}, the other threads on CPUs ${plan.others.join(',')} (${r.threads} threads, ${r.moved} moved)`;
  if (r.failed > 0) log.warn(`${line}; ${r.failed} refused: ${r.first_failure ?? '?'}`);
  else log.info(line, { pipeline_cpu, other_cpus: plan.others });
  placer.keepPlacing();
  running?.stop();
  running = placer;
  return placer;
}
