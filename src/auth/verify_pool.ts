// The verify pool: Piscina worker threads that check EIP-191 signatures, fed through one
// SharedArrayBuffer ring each (verify_ring.ts). Piscina starts, watches and replaces the threads;
// each runs one task for the pool's whole life (serving its ring), so no message crosses per
// batch. The front thread encodes a batch of checks straight into the ring (no per-task buffer, no
// structured clone), publishes it with one store and wakes the worker only when it sleeps (the
// native futex); the answers come back in the same bytes, and the front learns of them through
// its loop bell, rung once per sleep of the front (else one Atomics.waitAsync per ring). Before (one Piscina task per ~100 checks, a transferred ArrayBuffer each way) the
// message passing was ~12% of the worker and ~15% of the front thread (issue 11,
// docs/benchmarks.md). The threads' life (start, replacement, a broken pool, stop) is
// verify_workers.ts; this file routes the checks: rings, backlog, answers, the front's own checks.
// perf_hooks' binding, not the global accessor (a lazy getter per read: h22f): read per verify task.
import { performance } from 'node:perf_hooks';
import { createRecoverer, recovererLibrary, type RecoverBackendName, type Recoverer } from './recover.js';
import {
  encodePackedBatchInto, packedBatchCapacity, packedItemCapacity, readTaskTimesInto, TASK_TIMES_BYTES, verifyPackedInto,
} from './verify_codec.js';
import { Lane, type Batch, type Task } from './verify_lane.js';
import { STEAL_AFTER_US_MAX, TASK_SIZE_DEFAULT, TASK_SIZE_MAX } from './verify_limits.js';
import {
  align8, VERIFY_RING_DATA_BYTES_DEFAULT, VERIFY_RING_DATA_BYTES_MAX, VERIFY_RING_DATA_BYTES_MIN,
  VR_CLAIM_FRONT, VR_CLAIM_OPEN, VR_DONE, VR_READY, VR_TASK_HEADER_BYTES,
} from './verify_ring.js';
import type { SignedMessage } from './verify.js';
import { VerifyWorkers } from './verify_workers.js';
import { nativeFutex } from '../util/futex.js';
import { nativeLoopBell, type NativeLoopBell } from '../util/loop_bell.js';
import {
  defaultThreadCount, defaultWorkerFile, positiveInt, THREADS_MAX, type Secp256k1Threads, type VerifyPoolOptions, type VerifyPoolState,
} from './verify_pool_options.js';

// lib ES2022 does not declare Atomics.waitAsync; Node >= 16 has it.
type WaitAsyncFn = (array: Int32Array, index: number, value: number, timeout_ms?: number) =>
  | { async: false; value: 'not-equal' | 'timed-out' }
  | { async: true; value: Promise<'ok' | 'timed-out'> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsyncFn }).waitAsync;

export class VerifyPool {
  // `declare`: typed by the constructor's first store, not undefined first (src/engine/book.ts says why).
  declare readonly threads: number;
  declare readonly taskSize: number;
  declare readonly ringBytes: number;
  declare readonly stealAfterUs: number;
  /** Items checked on the calling thread by checkOneHere (the front's inline checks). */
  inlineChecked = 0;
  /** Items of published tasks the calling thread checked itself (they waited past stealAfterUs). */
  stolenChecked = 0;
  #stealTimer: NodeJS.Timeout | null = null;
  readonly #stealNow = (): void => {
    this.#stealTimer = null;
    this.stealLate();
  };
  #inlineRecoverer: Recoverer | null = null;
  /** checkOneHere's one-item list (no array per check). */
  readonly #one: SignedMessage[] = [];
  /** Where #packHere packs and answers a call on this thread (grown when a call needs more). */
  #scratch = Buffer.alloc(0);
  readonly #workers: VerifyWorkers;
  readonly #backend: RecoverBackendName | undefined;
  /** The workers' lanes (one array: a dead lane's place is taken by its replacement's). */
  readonly #lanes: Lane[];
  /** Tasks that found no room in any ring yet, oldest first (written as answers free room). */
  readonly #backlog: Task[] = [];
  #inFlight = 0;
  #idle: (() => void) | null = null;
  /** The front's loop bell the workers ring for answers (verify_ring.ts), or null: Atomics.waitAsync. */
  #bell: NativeLoopBell | null = null;
  #bell_id = 0;
  /**
   * The bell rang: read every armed ring whose worker has answered since. An armed ring with
   * nothing new is asked again, then DONE re-read (announce, then re-check): the ring may be a
   * late one that took back a newer ask (the worker stored DONE, was preempted before its swap of
   * FRONT_WAITS, the front read that DONE and asked again; the swap then ate the new ask), and
   * without a standing ask the worker would never ring for the ring's next answers (verify_ring.ts
   * "the lost wake-up", h25o).
   */
  readonly #rung = (): void => {
    for (const lane of this.#lanes) {
      if (!lane.waiting || lane.dead) continue;
      if (Atomics.load(lane.i32, VR_DONE) !== lane.done_seen || lane.askForBell(lane.done_seen)) this.#collect(lane);
    }
  };

  constructor(options: VerifyPoolOptions = {}) {
    this.threads = positiveInt(options.threads, defaultThreadCount(), 1, THREADS_MAX, 'threads');
    this.taskSize = positiveInt(options.taskSize, TASK_SIZE_DEFAULT, 1, TASK_SIZE_MAX, 'taskSize');
    this.ringBytes = align8(positiveInt(options.ringBytes, VERIFY_RING_DATA_BYTES_DEFAULT, VERIFY_RING_DATA_BYTES_MIN, VERIFY_RING_DATA_BYTES_MAX, 'ringBytes'));
    this.stealAfterUs = positiveInt(options.stealAfterUs, 0, 0, STEAL_AFTER_US_MAX, 'stealAfterUs');
    this.#backend = options.backend;
    if (options.wake !== undefined && options.wake !== 'native' && options.wake !== 'atomics') {
      throw new RangeError("wake must be 'native' or 'atomics'");
    }
    const native = options.wake !== 'atomics';
    this.#bell = native ? nativeLoopBell() : null;
    if (this.#bell !== null) {
      try {
        this.#bell_id = this.#bell.open(this.#rung);
      } catch {
        this.#bell = null; // no event loop here, or every bell slot taken: Atomics.waitAsync
      }
    }
    this.#workers = new VerifyWorkers(this.threads, this.ringBytes, options.workerFile ?? defaultWorkerFile(), options.backend, {
      fail: (task, err) => this.#fail(task, err),
      failWaiting: (err) => {
        for (const t of this.#backlog.splice(0)) this.#fail(t, err);
      },
      laneRestarted: () => this.#drainBacklog(),
    }, native ? nativeFutex() : null, this.#bell_id);
    this.#lanes = this.#workers.lanes;
  }

  /**
   * Verdicts for `items`, in order: 1 when the message was signed (EIP-191, low-s) by the item's
   * expected address, else 0. Malformed items are 0; the promise rejects only if a worker dies or
   * the pool is closed. With `times_ms` (2 per item), item i gets the worker's start and end of the
   * task that checked it at [2i] and [2i + 1] (epoch ms; the per-stage latency of the load bench).
   */
  verifyBatch(items: readonly SignedMessage[], times_ms?: Float64Array): Promise<Uint8Array> {
    if (this.#workers.closed) return Promise.reject(new Error('verify pool is closed'));
    if (this.#workers.broken !== null) return Promise.reject(this.#workers.broken);
    if (!Array.isArray(items)) return Promise.reject(new TypeError('items must be an array'));
    return new Promise<Uint8Array>((resolve, reject) => {
      const batch: Batch = { out: new Uint8Array(items.length), times_ms, remaining: 0, settled: false, resolve, reject };
      // Tasks of at most taskSize items and half a ring's bytes; a lone item larger than that (a
      // message of over ~170,000 chars with the default ring; request bodies are far smaller) is
      // refused: its verdict stays 0.
      const max_need = this.ringBytes >>> 1;
      const base = VR_TASK_HEADER_BYTES + 8 + TASK_TIMES_BYTES + 8;
      let start = 0;
      let need = base;
      for (let i = 0; i < items.length; i++) {
        const item_need = packedItemCapacity(items[i]) + 1; // + its verdict byte
        if (base + item_need > max_need) {
          if (i > start) this.#submit(batch, items, start, i, need);
          start = i + 1;
          need = base;
          continue;
        }
        if (i - start === this.taskSize || need + item_need > max_need) {
          this.#submit(batch, items, start, i, need);
          start = i;
          need = base;
        }
        need += item_need;
      }
      if (items.length > start) this.#submit(batch, items, start, items.length, need);
      if (batch.remaining === 0) resolve(batch.out);
    });
  }

  /**
   * Whether the pool is open and no task of it is queued or running: a check made on the calling
   * thread now (checkOneHere) cannot overtake a task nor leave a worker without work it could do
   * (the front's inline policy, verify_inline.ts).
   */
  get idle(): boolean {
    return this.#inFlight === 0 && !this.#workers.closed && this.#workers.broken === null;
  }

  /**
   * One check on the calling thread, now, through the worker's packed codec and recovery (so the
   * same verdict as a worker's: VALID, the candidate that signed, or 0, refusals of malformed items
   * included); its start and end go to times_ms[0] and [1] (epoch ms). The front's inline check at
   * light load (signature_batcher.ts, verify_inline.ts): no packing into a ring, no worker wake-up,
   * no waitAsync back.
   */
  checkOneHere(item: SignedMessage, times_ms?: Float64Array): number {
    if (this.#workers.closed) throw new Error('verify pool is closed');
    this.#one[0] = item;
    let answer: Uint8Array;
    try {
      answer = this.#packHere(this.#one, 0, 1);
    } finally {
      this.#one.length = 0; // not kept alive by the pool
    }
    this.inlineChecked++;
    if (times_ms !== undefined) readTaskTimesInto(answer, 0, 1, times_ms, 0, 1);
    return answer[0];
  }

  /**
   * Checks items [start, end) on this thread through the worker's packed codec (so the same
   * verdicts: which candidate signed, refusals of malformed items). Returns this thread's scratch
   * bytes (grown when a call needs more: no buffer per check) holding the answer area at offset
   * 0, verdicts then the start and end times, as a task's in a ring; valid until the next call.
   */
  #packHere(items: readonly SignedMessage[], start: number, end: number): Uint8Array {
    const answer_bytes = align8(end - start + TASK_TIMES_BYTES);
    const need = answer_bytes + align8(packedBatchCapacity(items, start, end));
    if (this.#scratch.length < need) this.#scratch = Buffer.alloc(Math.max(need, 2 * this.#scratch.length));
    encodePackedBatchInto(this.#scratch, answer_bytes, this.#scratch.length, items, start, end);
    verifyPackedInto(this.#scratch, answer_bytes, 0, this.#recoverer());
    return this.#scratch;
  }

  /** The recoverer of this (the calling) thread, made on first use. */
  #recoverer(): Recoverer {
    return this.#inlineRecoverer ?? (this.#inlineRecoverer = createRecoverer({ backend: this.#backend }));
  }

  #submit(batch: Batch, items: readonly SignedMessage[], start: number, end: number, need: number): void {
    batch.remaining++;
    this.#inFlight++;
    const task: Task = {
      batch, items, start, end, need: align8(need), at: 0, answer_at: 0, batch_at: 0, batch_end: 0, end_total: 0,
      queued_ms: performance.now(), claim: VR_CLAIM_OPEN,
    };
    if (this.#backlog.length > 0 || !this.#write(task)) this.#backlog.push(task);
  }

  /** Into the live ring with the fewest bytes in use that has room; false when none has. */
  #write(task: Task): boolean {
    let best: Lane | null = null;
    for (const lane of this.#lanes) {
      if (!lane.dead && (best === null || lane.usedBytes < best.usedBytes)) best = lane;
    }
    if (best === null || !best.tryWrite(task)) return false;
    this.#arm(best);
    this.#armSteal();
    return true;
  }

  /**
   * The calling (front) thread checks the oldest waiting task nobody has started, if it was queued
   * stealAfterUs ago or longer: one task per call, so the front's own turn stays short (a task is
   * at most taskSize recoveries). A task in a worker's ring is claimed first (the worker skips it,
   * verify_ring.ts "Claims"); one still in the front's backlog (the rings were full) is simply
   * taken. Its verdicts are answered at once. Called by the signature batcher after each turn's
   * flush, by the pool after reading answers, and by a timer while tasks wait (so a worker that
   * gets no core, or never comes back, is covered when nothing else happens). Returns the items
   * checked (0: nothing waited that long, or stealing is off).
   */
  stealLate(): number {
    if (this.stealAfterUs === 0) return 0;
    const queued_by_ms = performance.now() - this.stealAfterUs / 1000;
    let checked = 0;
    for (const lane of this.#lanes) {
      const task = lane.dead ? null : lane.claimOldest(queued_by_ms);
      if (task === null) continue;
      verifyPackedInto(lane.area, task.batch_at, task.answer_at, this.#recoverer());
      this.#answer(lane.area, task);
      checked = task.end - task.start;
      break;
    }
    const head = this.#backlog[0];
    if (checked === 0 && head !== undefined && head.queued_ms <= queued_by_ms) {
      this.#backlog.shift();
      head.claim = VR_CLAIM_FRONT;
      this.#answer(this.#packHere(head.items, head.start, head.end), { ...head, answer_at: 0 });
      checked = head.end - head.start;
    }
    this.stolenChecked += checked;
    this.#armSteal();
    return checked;
  }

  /** A timer for the oldest waiting task's steal time, while one waits (one timer at a time). */
  #armSteal(): void {
    if (this.stealAfterUs === 0 || this.#stealTimer !== null) return;
    let oldest = this.#backlog.length > 0 ? this.#backlog[0].queued_ms : Infinity;
    for (const lane of this.#lanes) {
      for (const t of lane.outstanding) {
        if (t.claim !== VR_CLAIM_OPEN) continue;
        if (t.queued_ms < oldest) oldest = t.queued_ms;
        break;
      }
    }
    if (oldest === Infinity) return;
    const due_ms = Math.max(1, Math.ceil(oldest + this.stealAfterUs / 1000 - performance.now()));
    this.#stealTimer = setTimeout(this.#stealNow, due_ms);
    this.#stealTimer.unref();
  }

  #drainBacklog(): void {
    while (this.#backlog.length > 0 && this.#write(this.#backlog[0])) this.#backlog.shift();
  }

  /** One sleep on each ring's answers while it holds tasks: on the loop bell, else one waitAsync. */
  #arm(lane: Lane): void {
    if (lane.waiting || lane.dead) return;
    lane.waiting = true;
    if (lane.bell_id !== 0) {
      if (lane.askForBell(lane.done_seen)) queueMicrotask(() => this.#collect(lane)); // answered before the ask
      return;
    }
    const r = waitAsync(lane.i32, VR_DONE, lane.done_seen);
    if (r.async) r.value.then(() => this.#collect(lane));
    else queueMicrotask(() => this.#collect(lane));
  }

  /** Reads the answers the worker has published, in task order, and frees their bytes. */
  #collect(lane: Lane): void {
    lane.waiting = false;
    if (lane.dead) return;
    const done = Atomics.load(lane.i32, VR_DONE);
    while (lane.done_seen !== done) {
      const task = lane.outstanding.shift() as Task;
      lane.done_seen = (lane.done_seen + 1) | 0;
      lane.tail_total = task.end_total;
      if (task.claim !== VR_CLAIM_FRONT) this.#answer(lane.area, task); // the front's: answered when taken
    }
    this.#drainBacklog();
    if (lane.outstanding.length > 0) this.#arm(lane);
    this.stealLate();
  }

  #answer(area: Uint8Array, task: Task): void {
    const { batch, start, end } = task;
    const count = end - start;
    const at = task.answer_at;
    if (!batch.settled) {
      for (let i = 0; i < count; i++) batch.out[start + i] = area[at + i]; // no view per task
      if (batch.times_ms !== undefined) readTaskTimesInto(area, at, count, batch.times_ms, start, end);
    }
    this.#finished(task);
  }

  #fail(task: Task, err: Error): void {
    if (!task.batch.settled) {
      task.batch.settled = true;
      task.batch.reject(err);
    }
    this.#finished(task);
  }

  #finished(task: Task): void {
    this.#inFlight--;
    const batch = task.batch;
    if (--batch.remaining === 0 && !batch.settled) {
      batch.settled = true;
      batch.resolve(batch.out);
    }
    if (this.#inFlight === 0 && this.#idle !== null) this.#idle();
  }

  /** Tasks submitted and not yet answered (queued or running): for back-pressure in the caller. */
  get pendingTasks(): number {
    return this.#inFlight;
  }

  /**
   * Why the pool refuses work: a worker ended before it ever served its ring, or a replacement
   * could not load (a broken build; every call rejects with this); null while the pool works.
   */
  get broken(): Error | null {
    return this.#workers.broken;
  }

  /** Workers that died after they served and were replaced, since the pool started. */
  get workerRestarts(): number {
    return this.#workers.restarts;
  }

  /** For operators: workers serving, restarts, and why the pool is broken (GET /admin/state, GET /health). */
  state(): VerifyPoolState {
    let ready = 0;
    for (const lane of this.#lanes) if (!lane.dead && lane.ready) ready++;
    return {
      threads: this.threads, workers_ready: ready, worker_restarts: this.#workers.restarts,
      broken: this.#workers.broken === null ? null : this.#workers.broken.message, broken_at_ms: this.#workers.brokenAtMs,
    };
  }

  /** Whether every worker has started serving its ring (a fresh pool's threads take ~0.1 s to load). */
  get workersReady(): boolean {
    return this.#lanes.every((lane) => lane.ready);
  }

  /**
   * Settles once every worker has started serving its ring (and so reported its secp256k1
   * library), or ended before it did (a broken build: the pool is broken then), or after
   * `wait_ms_max` (default: no limit).
   */
  async ready(wait_ms_max = Infinity): Promise<void> {
    await Promise.all(this.#lanes.map((lane) => {
      const r = waitAsync(lane.i32, VR_READY, 0, wait_ms_max);
      return r.async && !lane.dead ? r.value : undefined;
    }));
  }

  /**
   * The library each checking thread calls: the front's is its own recoverer's (made here if no
   * check ran on the front yet), each worker's the one it wrote into its ring (verify_ring.ts
   * LIBRARY): a worker's environment or build could differ from the front's, so it is not assumed.
   */
  secp256k1Threads(): Secp256k1Threads {
    return { front: recovererLibrary(this.#recoverer()), verify_workers: this.#lanes.map((lane) => lane.library) };
  }

  /** Batches waiting for room in a verify ring (the front-side backlog; metrics). */
  get queuedTasks(): number {
    return this.#backlog.length;
  }

  /** Waits for the tasks in flight, then stops the workers. */
  async close(): Promise<void> {
    if (this.#workers.closed) return;
    this.#workers.beginClose();
    if (this.#inFlight > 0 && this.#workers.broken === null) {
      await new Promise<void>((resolve) => {
        this.#idle = resolve;
      });
    }
    // Stealing went on while the last tasks finished (a worker that never comes back is covered).
    if (this.#stealTimer !== null) clearTimeout(this.#stealTimer);
    this.#stealTimer = null;
    await this.#workers.stop();
    if (this.#bell !== null) this.#bell.close(this.#bell_id);
    this.#bell = null;
  }
}

export function createVerifyPool(options: VerifyPoolOptions = {}): VerifyPool {
  return new VerifyPool(options);
}
