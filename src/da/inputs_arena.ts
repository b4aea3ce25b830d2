// The DA store's copies of the submitted batches' input bytes (src/da/da_store.ts, LmdbDaStore).
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
