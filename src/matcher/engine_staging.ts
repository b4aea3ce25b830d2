// The engine part of a snapshot as the matcher hands it to the snapshot writer thread: copies of
// the engine's columns (src/engine/canonical.ts, copyEngineColumns) and of the account registry,
// in SharedArrayBuffers kept from one snapshot to the next, instead of the state walked into
// objects and packed by msgpackr on the matcher's thread (~200 ms at 112k open orders; the copies
// cost a few ms: docs/benchmarks.md h29s, h29w). The writer thread walks and packs them
// (stagedEngineBytes): the same bytes as encodeEngine(matcher.captureState()).
//
// Up to KEPT_SETS_MAX sets of kept buffers: each has its `busy` word, the generation of the copy
// being read from it (0: free); take() copies into the first free set, allocating the next one
// only when all it has are held, and declines when KEPT_SETS_MAX are held. Only the holder of a
// generation frees its set (after the walk, or when its snapshot is dropped). Snapshots are
// written one at a time, so a second set serves a snapshot that falls due while the previous is
// still being written (h30s); a second set unused for SPARE_SET_RELEASE_AFTER_TAKES snapshots is
// given back (h31f).
//
// The rule both matchers follow (takeDue, h31f): a snapshot that falls due while every set is
// still being read is deferred, never walked and packed on the matcher's thread (~185 ms at 112k
// open orders, h30s), and taken at the first batch boundary after a set is free, at that batch.
// The single process runs two sets (a cluster matcher one: it has no front part whose capture at
// the due batch a deferral wastes).
import { canonicalOfColumns, KEPT_COPY_ROOM, type EngineColumns } from '../engine/canonical.js';
import type { Matcher } from './matcher.js';
import { encodeEngine } from './engine_snapshot.js';
import { ADDRESS_BYTES } from './registry.js';

/** A staged engine part: what crosses to the writer thread (structured clone; the arrays are shared, not copied). */
export interface StagedEngine {
  columns: EngineColumns;
  /** The registry's addresses, ADDRESS_BYTES per account id (id 0 zeros), as captureState takes them. */
  addresses: Uint8Array;
  /** [0]: the generation holding the buffers (0: free). */
  busy: Int32Array;
  generation: number;
}

export function isStagedEngine(e: Uint8Array | StagedEngine): e is StagedEngine {
  return !(e instanceof Uint8Array);
}

/**
 * Sets of kept buffers at most: one being read by the writer thread and one for the snapshot due
 * meanwhile (it waits for the first write, one at a time). A third would only queue another write
 * behind a slow disk, at another full copy of the columns (~21-27 MB at 112k open orders, h29w)
 * kept meanwhile; past two, the snapshot due is deferred (takeDue).
 */
export const KEPT_SETS_MAX = 2;

/**
 * Snapshots in a row that the first set served, after which a free second set is released (its
 * 21-27 MB at 112k open orders, h29w): a host whose snapshots overlapped once (a slow disk
 * moment, a DA thread behind) gets the memory back; one where they keep overlapping keeps it (the
 * second set is used at least once in this many). Reallocating it costs its first copy ~22 ms CPU
 * instead of ~4 at that size (h30s), once per release. At the default every_batches (100,000)
 * this is hours; it counts snapshots, not time, so that the matcher needs no clock for it.
 */
export const SPARE_SET_RELEASE_AFTER_TAKES = 16;

/** One set of kept buffers: the last copy made into it, and the word its reader holds. */
interface KeptSet {
  columns: EngineColumns | null;
  addresses: Uint8Array;
  /** [0]: the generation holding the buffers (0: free). */
  readonly busy: Int32Array;
}

function keptSet(): KeptSet {
  return { columns: null, addresses: new Uint8Array(new SharedArrayBuffer(ADDRESS_BYTES * 1024)), busy: new Int32Array(new SharedArrayBuffer(4)) };
}

/** The matcher's side: the kept buffers and the copy into them. */
export class EngineStaging {
  /** Allocated on first need: a second set exists only once a snapshot fell due while the first was read. */
  private readonly sets: KeptSet[] = [];
  private readonly sets_max: number;
  private generation = 0;
  /** Copies the first set served since a later one was last needed (SPARE_SET_RELEASE_AFTER_TAKES). */
  private takes_without_spare = 0;
  /** The batch a deferred snapshot fell due at, while it waits for a free set (null: none waits). */
  private waiting: number | null = null;
  /** take() calls that found every set still being read (takeDue's tries are not counted). */
  declined = 0;
  /** Snapshots due that takeDue deferred (every set still read): each due batch counted once. */
  deferred = 0;
  /** Second sets given back after SPARE_SET_RELEASE_AFTER_TAKES snapshots without one. */
  spare_sets_released = 0;

  /** `sets_max`: 1 for a cluster matcher (its snapshot due while one is written waits for it). */
  constructor(sets_max: number = KEPT_SETS_MAX) {
    if (!Number.isInteger(sets_max) || sets_max < 1 || sets_max > KEPT_SETS_MAX) throw new Error(`EngineStaging: sets_max ${sets_max} not in 1..${KEPT_SETS_MAX}`);
    this.sets_max = sets_max;
  }

  /**
   * At a batch boundary (`due`: a snapshot falls due at this batch): the copy to hand on, or null.
   * Due while every set is still being read, the snapshot is deferred (counted in `deferred`); any
   * later call with a set free takes it, due or not, at the matcher's batch then. A snapshot due
   * while one waits merges into it (counted too). The caller tells the front / logs a deferral
   * (`due` and null returned) and treats a copy taken while `waiting_since` was set as off its
   * schedule.
   */
  takeDue(matcher: Matcher, due: boolean): StagedEngine | null {
    if (!due && this.waiting === null) return null;
    const staged = this.copy(matcher);
    if (staged !== null) {
      this.waiting = null;
      return staged;
    }
    if (due) {
      this.deferred++;
      this.waiting ??= matcher.batch_id;
    }
    return null;
  }

  /** The batch the deferred snapshot fell due at while it waits for a free set; null: none waits. */
  get waiting_since(): number | null {
    return this.waiting;
  }

  /**
   * Whether a deferred snapshot waits and a copy could be taken now (a set free, or room for one):
   * the matcher's loop asks this every turn while one waits, so it costs a few loads, not a clock
   * read or a claim.
   */
  deferredTakeable(): boolean {
    if (this.waiting === null) return false;
    if (this.sets.length < this.sets_max) return true;
    for (let i = 0; i < this.sets.length; i++) if (Atomics.load(this.sets[i].busy, 0) === 0) return true;
    return false;
  }

  /** Copies the matcher's state after its last batch; null (counted in `declined`) while every set's copy is still being read. */
  take(matcher: Matcher): StagedEngine | null {
    const staged = this.copy(matcher);
    if (staged === null) this.declined++;
    return staged;
  }

  private copy(matcher: Matcher): StagedEngine | null {
    const generation = this.generation + 1;
    const set = this.claim(generation);
    if (set === null) return null;
    this.generation = generation;
    const columns = matcher.engine.copyColumns(set.columns);
    set.columns = columns;
    const size = matcher.registry.size;
    if (set.addresses.length < size * ADDRESS_BYTES) {
      set.addresses = new Uint8Array(new SharedArrayBuffer(Math.ceil(size * KEPT_COPY_ROOM) * ADDRESS_BYTES));
    }
    const addresses = set.addresses.subarray(0, size * ADDRESS_BYTES);
    // Id 0 (the fee account) has no address: zeros, as in captureState.
    addresses.fill(0, 0, ADDRESS_BYTES);
    for (let id = 1; id < size; id++) addresses.set(matcher.registry.addressBytes(id), id * ADDRESS_BYTES);
    return { columns, addresses, busy: set.busy, generation };
  }

  /** Marks the first free set held by `generation` (a new one if all are held and the limit allows); null: none. */
  private claim(generation: number): KeptSet | null {
    const sets = this.sets;
    for (let i = 0; i < sets.length; i++) {
      if (Atomics.compareExchange(sets[i].busy, 0, 0, generation) !== 0) continue;
      if (i === 0) this.releaseSpare();
      else this.takes_without_spare = 0;
      return sets[i];
    }
    if (sets.length >= this.sets_max) return null;
    const set = keptSet();
    Atomics.store(set.busy, 0, generation);
    sets.push(set);
    this.takes_without_spare = 0;
    return set;
  }

  /**
   * The first set serves another copy: after SPARE_SET_RELEASE_AFTER_TAKES in a row, drops the
   * free sets past it (only this thread claims a set, so a free one stays free until dropped;
   * the writer thread's last reference to its buffers goes with its finished job).
   */
  private releaseSpare(): void {
    if (this.sets.length === 1 || ++this.takes_without_spare < SPARE_SET_RELEASE_AFTER_TAKES) return;
    while (this.sets.length > 1 && Atomics.load(this.sets[this.sets.length - 1].busy, 0) === 0) {
      this.sets.pop();
      this.spare_sets_released++;
    }
    this.takes_without_spare = 0;
  }

  /** Sets whose copy is being read (tests). */
  get held(): number {
    return this.sets.reduce((n, set) => n + (Atomics.load(set.busy, 0) !== 0 ? 1 : 0), 0);
  }

  /** Whether any copy is being read (tests). */
  get reading(): boolean {
    return this.held > 0;
  }

  /** Sets of buffers allocated so far (at most KEPT_SETS_MAX: the memory the copies keep). */
  get sets_allocated(): number {
    return this.sets.length;
  }
}

/** Frees the set of kept buffers `s` holds, if it still does (idempotent; a later copy's hold is left alone). */
export function releaseStaged(s: StagedEngine): void {
  Atomics.compareExchange(s.busy, 0, s.generation, 0);
}

/**
 * The engine part's bytes from a staged copy (the writer thread): the walk, msgpackr, then the
 * buffers are freed. Byte for byte encodeEngine(captureState()) of the same state.
 */
export function stagedEngineBytes(s: StagedEngine): Uint8Array {
  if (Atomics.load(s.busy, 0) !== s.generation) throw new Error(`snapshot: staged engine copy ${s.generation} is not held (overwritten?)`);
  try {
    const canonical = canonicalOfColumns(s.columns);
    // slice: an ArrayBuffer-backed copy, as captureState's own array (and msgpackr packs into a reused buffer).
    return new Uint8Array(encodeEngine({ canonical, addresses: s.addresses.slice() }));
  } finally {
    releaseStaged(s);
  }
}
