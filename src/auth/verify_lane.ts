// The front thread's side of one verify ring (verify_ring.ts): where tasks go in the ring's bytes,
// their publication, and the claim a task's checker takes (the worker, or the front itself when
// the task waited too long: VerifyPool's stealing). The pool (verify_pool.ts) decides which lane
// a task goes to and when the front helps.
import type { Piscina } from 'piscina';
import type { NativeFutex } from '../util/futex.js';
import { SECP256K1_LIBRARIES, type RecoverBackendName, type Secp256k1Library } from './recoverer.js';
import { encodePackedBatchInto, TASK_TIMES_BYTES } from './verify_codec.js';
import {
  align8, VERIFY_RING_HEADER_BYTES, VR_CLAIM_FRONT, VR_CLAIM_OPEN, VR_CLOSED, VR_DONE, VR_DOORBELL, VR_FRONT_BELL, VR_FRONT_WAITS,
  VR_FUTEX, VR_LIBRARY, VR_PUBLISHED, VR_READY, VR_TASK_CLAIM_WORD, VR_TASK_HEADER_BYTES, VR_WAITERS, VR_WRAP_MARKER,
  type VerifyWorkerData,
} from './verify_ring.js';
import type { SignedMessage } from './verify.js';

/** One verifyBatch call: its verdicts fill in as its tasks are answered. */
export interface Batch {
  readonly out: Uint8Array;
  readonly times_ms: Float64Array | undefined;
  remaining: number;
  settled: boolean;
  resolve(verdicts: Uint8Array): void;
  reject(err: Error): void;
}

/** Items [start, end) of a batch's list, checked as one task in one worker's ring. */
export interface Task {
  readonly batch: Batch;
  readonly items: readonly SignedMessage[];
  readonly start: number;
  readonly end: number;
  /** Upper bound of the task's bytes in a ring (header, answer area, packed batch). */
  readonly need: number;
  /** Where the task starts in the ring's data area (set when written). */
  at: number;
  /** Where the answer area is and where the packed batch starts and ends (set when written). */
  answer_at: number;
  batch_at: number;
  batch_end: number;
  /** The ring's byte total after this task (its bytes are free once the worker has passed it). */
  end_total: number;
  /** performance.now() when the pool was asked for it (its age decides stealing). */
  readonly queued_ms: number;
  /**
   * VR_CLAIM_OPEN until a claim is seen: VR_CLAIM_WORKER once the front's claim lost (the worker
   * has it), VR_CLAIM_FRONT once the front checked it itself (answered then, its bytes freed when
   * the worker has passed it).
   */
  claim: number;
}

/** One worker's ring and the task that serves it. */
export class Lane {
  declare readonly i32: Int32Array;
  declare readonly area: Buffer;
  declare readonly words: Uint32Array;
  /** The worker's serveRing task: settles when the ring is closed (or the worker dies). */
  declare readonly serving: Promise<unknown>;
  /** Bytes handed out (wrap waste included) and bytes freed, monotonic. */
  head_total = 0;
  tail_total = 0;
  published = 0;
  done_seen = 0;
  /** Tasks published and not yet passed by the worker, oldest first. */
  readonly outstanding: Task[] = [];
  waiting = false;
  dead = false;

  declare readonly data_bytes: number;
  /** The native futex the worker sleeps on (verify_ring.ts FUTEX), or null: Atomics.wait. */
  declare readonly futex: NativeFutex | null;
  /** The front's loop bell the worker rings for answers (verify_ring.ts FRONT_BELL), or 0: Atomics.waitAsync. */
  declare readonly bell_id: number;

  constructor(
    data_bytes: number, piscina: Piscina<VerifyWorkerData, number>, backend: RecoverBackendName | undefined,
    futex: NativeFutex | null, bell_id: number,
  ) {
    this.data_bytes = data_bytes;
    this.futex = futex;
    this.bell_id = bell_id;
    const sab = new SharedArrayBuffer(VERIFY_RING_HEADER_BYTES + data_bytes);
    this.i32 = new Int32Array(sab, 0, VERIFY_RING_HEADER_BYTES / 4);
    // Before the worker starts (it reads them once): how it sleeps and how it tells the front.
    this.i32[VR_FUTEX] = futex === null ? 0 : 1;
    this.i32[VR_FRONT_BELL] = bell_id;
    this.area = Buffer.from(sab, VERIFY_RING_HEADER_BYTES); // a Buffer: the codec writes texts with Buffer#write
    this.words = new Uint32Array(sab, VERIFY_RING_HEADER_BYTES);
    this.serving = piscina.run({ ring: sab, backend });
  }

  /** Whether a worker ever started serving this ring. */
  get ready(): boolean {
    return Atomics.load(this.i32, VR_READY) === 1;
  }

  /** The secp256k1 library the worker's recoverer calls, as the worker reported it; null before it started serving. */
  get library(): Secp256k1Library | null {
    return SECP256K1_LIBRARIES[Atomics.load(this.i32, VR_LIBRARY) - 1] ?? null;
  }

  get usedBytes(): number {
    return this.head_total - this.tail_total;
  }

  /** Writes and publishes `task` when it fits now; false when the ring lacks the room. */
  tryWrite(task: Task): boolean {
    const cap = this.data_bytes;
    let pos = this.head_total % cap;
    let waste = 0;
    if (pos + task.need > cap) {
      waste = cap - pos;
      pos = 0;
    }
    if (this.usedBytes + waste + task.need > cap) return false;
    if (waste > 0) this.words[(cap - waste) >>> 2] = VR_WRAP_MARKER; // waste >= 8: offsets are 8-aligned
    const count = task.end - task.start;
    const answer_bytes = align8(count + TASK_TIMES_BYTES);
    const batch_at = pos + VR_TASK_HEADER_BYTES + answer_bytes;
    const used = encodePackedBatchInto(this.area, batch_at, pos + task.need, task.items, task.start, task.end);
    const size = align8(VR_TASK_HEADER_BYTES + answer_bytes + used);
    const w = pos >>> 2;
    this.words[w] = size;
    this.words[w + 1] = answer_bytes;
    this.words[w + VR_TASK_CLAIM_WORD] = VR_CLAIM_OPEN; // plain: published by the store below
    this.head_total += waste + size;
    task.at = pos;
    task.answer_at = pos + VR_TASK_HEADER_BYTES;
    task.batch_at = batch_at;
    task.batch_end = batch_at + used;
    task.end_total = this.head_total;
    this.outstanding.push(task);
    this.published = (this.published + 1) | 0;
    Atomics.store(this.i32, VR_PUBLISHED, this.published);
    if (Atomics.load(this.i32, VR_WAITERS) !== 0) this.#wakeWorker();
    return true;
  }

  /** Wakes the worker asleep on this ring (after PUBLISHED or CLOSED was stored): the doorbell's bump first. */
  #wakeWorker(): void {
    if (this.futex === null) {
      Atomics.notify(this.i32, VR_PUBLISHED);
      return;
    }
    Atomics.add(this.i32, VR_DOORBELL, 1);
    this.futex.wake(this.i32, VR_DOORBELL, 1);
  }

  /** Closes the ring: the worker returns once it has passed every task (verify_workers.ts stop). */
  close(): void {
    Atomics.store(this.i32, VR_CLOSED, 1);
    this.#wakeWorker(); // whether it announced its sleep or not: a close is rare
  }

  /**
   * The front's loop-bell sleep on this ring's answers (bell_id set): asks the worker to ring for
   * its next DONE, then looks again. True: answers were published before the ask (the worker may
   * not ring for them): read them now.
   */
  askForBell(done_seen: number): boolean {
    Atomics.store(this.i32, VR_FRONT_WAITS, 1);
    return Atomics.load(this.i32, VR_DONE) !== done_seen;
  }

  /**
   * The oldest task nobody has claimed yet, claimed for the front when it was queued at or
   * before `queued_by_ms`; null when there is none that old (or the worker has them all). Tasks
   * the worker turns out to hold are marked so and skipped.
   */
  claimOldest(queued_by_ms: number): Task | null {
    for (const task of this.outstanding) {
      if (task.claim !== VR_CLAIM_OPEN) continue;
      if (task.queued_ms > queued_by_ms) return null; // later ones are younger still
      const was = Atomics.compareExchange(this.words, (task.at >>> 2) + VR_TASK_CLAIM_WORD, VR_CLAIM_OPEN, VR_CLAIM_FRONT);
      if (was === VR_CLAIM_OPEN) {
        task.claim = VR_CLAIM_FRONT;
        return task;
      }
      task.claim = was; // the worker's: it checks tasks in order, so try the next
    }
    return null;
  }
}
