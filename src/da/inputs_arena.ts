// The DA store's copies of the submitted batches' input bytes (src/da/da_store.ts, LmdbDaStore),
// and the arenas it keeps for later commit groups (ArenaPool).
/**
 * The submitted batches' input bytes, one arena per commit group, reused once the group is
 * committed. Why not a copy per batch: each is an ArrayBuffer (~12 KB at ~55 requests per batch),
 * and every ArrayBuffer counts as external memory allocated since the last full GC, which V8 adds
 * to the DA worker's small old generation (~10 MB) when it decides to start marking: ~210 bytes
 * per request at max rate, the largest such allocation left in the DA worker (docs/benchmarks.md,
 * "Issue 11, the DA worker's full GCs").
 */
export class InputsArena {
  private bytes = Buffer.allocUnsafeSlow(64 * 1024);
  private used = 0;

  /** A copy of `b` that lives until reset(). */
  copy(b: Uint8Array): Buffer {
    if (this.used + b.length > this.bytes.length) {
      // The views handed out keep the old buffer; the next groups start in the larger one.
      this.bytes = Buffer.allocUnsafeSlow(Math.max(2 * this.bytes.length, b.length));
      this.used = 0;
    }
    const at = this.used;
    this.bytes.set(b, at);
    this.used = at + b.length;
    return this.bytes.subarray(at, at + b.length);
  }

  /** Every copy handed out is dead (its group committed or failed): reuse the space. */
  reset(): void {
    this.used = 0;
  }

  /** Bytes the arena holds (it only grows: a group larger than it doubles it). */
  get capacity_bytes(): number {
    return this.bytes.length;
  }
}

/**
 * A committed group's arena is kept for a later group only up to this size; a larger one is left
 * to the GC. An arena only grows, and up to two are reused for the process's life, so one huge
 * group (a replay, a disk stalled for seconds) would otherwise pin its size for good. 1 MiB holds
 * ~9 groups at the max rate (~10,600 requests/s x 208 bytes per record x 50 ms = ~110 KB per
 * group): a commit up to ~9 intervals late still reuses its arena.
 */
export const ARENA_BYTES_KEPT_MAX = 1024 * 1024;

/**
 * The arenas of committed groups, for the next groups (at most two groups are alive: one
 * committing, one open), and the arena the next group takes: a group opens only once its first
 * batch is built, so that batch is copied in before its group exists.
 */
export class ArenaPool {
  private readonly free: InputsArena[] = [];
  private next: InputsArena | null = null;

  /** A copy of `bytes` in the arena the next group takes (no group is open). */
  copyForNext(bytes: Uint8Array): Buffer {
    this.next ??= this.free.pop() ?? new InputsArena();
    return this.next.copy(bytes);
  }

  /** The arena a group opening now takes (the one its first batch was copied into, if any). */
  take(): InputsArena {
    const arena = this.next ?? this.free.pop() ?? new InputsArena();
    this.next = null;
    return arena;
  }

  /** The group is written (its batches are read from LMDB now): its arena serves a later group (unless above ARENA_BYTES_KEPT_MAX). */
  release(arena: InputsArena): void {
    arena.reset();
    if (this.free.length < 2 && arena.capacity_bytes <= ARENA_BYTES_KEPT_MAX) this.free.push(arena);
  }

  /** Bytes of the committed groups' arenas kept for later groups (tests: at most 2 x ARENA_BYTES_KEPT_MAX). */
  bytesKept(): number {
    let bytes = 0;
    for (const a of this.free) bytes += a.capacity_bytes;
    return bytes;
  }
}
