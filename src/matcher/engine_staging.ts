// The engine part of a snapshot as the matcher hands it to the snapshot writer thread: copies of
// the engine's columns (src/engine/canonical.ts, copyEngineColumns) and of the account registry,
// in SharedArrayBuffers kept from one snapshot to the next, instead of the state walked into
// objects and packed by msgpackr on the matcher's thread (~200 ms at 112k open orders; the copies
// cost a few ms: docs/benchmarks.md h29s, h29w). The writer thread walks and packs them
// (stagedEngineBytes): the same bytes as encodeEngine(matcher.captureState()).
//
// One set of kept buffers is safe because one snapshot is written at a time: `busy` holds the
// generation of the copy being read (0: free); take() declines while it is set, and only the
// holder of that generation frees it (after the walk, or when its snapshot is dropped).
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

/** The matcher's side: the kept buffers and the copy into them. */
export class EngineStaging {
  private kept: EngineColumns | null = null;
  private addresses: Uint8Array = new Uint8Array(new SharedArrayBuffer(ADDRESS_BYTES * 1024));
  private readonly busy = new Int32Array(new SharedArrayBuffer(4));
  private generation = 0;
  /** Snapshots that found the buffers still being read (the caller passes over or falls back). */
  declined = 0;

  /** Copies the matcher's state after its last batch; null while the previous copy is still being read. */
  take(matcher: Matcher): StagedEngine | null {
    const generation = this.generation + 1;
    if (Atomics.compareExchange(this.busy, 0, 0, generation) !== 0) {
      this.declined++;
      return null;
    }
    this.generation = generation;
    const columns = matcher.engine.copyColumns(this.kept);
    this.kept = columns;
    const size = matcher.registry.size;
    if (this.addresses.length < size * ADDRESS_BYTES) {
      this.addresses = new Uint8Array(new SharedArrayBuffer(Math.ceil(size * KEPT_COPY_ROOM) * ADDRESS_BYTES));
    }
    const addresses = this.addresses.subarray(0, size * ADDRESS_BYTES);
    // Id 0 (the fee account) has no address: zeros, as in captureState.
    addresses.fill(0, 0, ADDRESS_BYTES);
    for (let id = 1; id < size; id++) addresses.set(matcher.registry.addressBytes(id), id * ADDRESS_BYTES);
    return { columns, addresses, busy: this.busy, generation };
  }

  /** Whether a copy is being read (tests). */
  get reading(): boolean {
    return Atomics.load(this.busy, 0) !== 0;
  }
}

/** Frees the kept buffers if `s` still holds them (idempotent; a later copy's hold is left alone). */
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
