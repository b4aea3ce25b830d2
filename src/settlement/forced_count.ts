// Which batch took each forced-inclusion queue entry in (docs/settlement.md, "Forced inclusions"):
// the count a postRoots transaction carries is the number of entries, in queue order from the
// contract's forcedProcessed, that batches up to the last posted one took in. One implementation
// for the single process's chain link and the cluster's root poster (src/cluster/settlement_poster.ts,
// which learns the batches from the gateway that handled the entries).

/** An entry's batch; or, while it waits in the engine's inbox, its inbox entry id. */
interface Taken {
  batch: number | null;
  entry_id: number;
}

export class ForcedCount {
  /** Queue id -> the batch that took it in (null: still in the inbox, entry id kept). */
  private readonly taken = new Map<number, Taken>();

  /** `inclusion(entry_id)`: the batch that included an inbox entry (<= 0: not yet). */
  constructor(private readonly inclusion: (entry_id: number) => number = () => 0) {}

  /** Entry `id` was taken in by `batch` (refused before the engine, or by the engine, in that batch). */
  handled(id: number, batch: number): void {
    this.taken.set(id, { batch, entry_id: 0 });
  }

  /** Entry `id` waits in the engine's inbox as `entry_id`: taken in by the batch that includes it. */
  queued(id: number, entry_id: number): void {
    this.taken.set(id, { batch: null, entry_id });
  }

  /** The batch that took entry `id` in (null: not handled yet, or still in the inbox). */
  batchOf(id: number): number | null {
    const f = this.taken.get(id);
    if (f === undefined) return null;
    if (f.batch === null) {
      const b = this.inclusion(f.entry_id);
      if (b <= 0) return null;
      f.batch = b;
    }
    return f.batch;
  }

  /** How many queue entries, from the contract's count `from` on, batches up to `batch_id` took in. */
  countAt(batch_id: number, from: number): number {
    let k = from;
    for (;;) {
      const b = this.batchOf(k);
      if (b === null || b > batch_id) return k;
      k++;
    }
  }

  /** Whether queue entry `from` (the first the contract has not counted) is taken in and waits to be counted. */
  waiting(from: number): boolean {
    return this.countAt(Number.MAX_SAFE_INTEGER, from) > from;
  }

  /** The batches of the entries taken in from `from` on, in queue order, at most `max` (stops at the first not taken in). */
  batchesFrom(from: number, max: number): number[] {
    const out: number[] = [];
    for (let k = from; out.length < max; k++) {
      const b = this.batchOf(k);
      if (b === null) break;
      out.push(b);
    }
    return out;
  }

  /** The contract counted every entry below `count`: they are not needed any more. */
  forgetBelow(count: number): void {
    for (const k of this.taken.keys()) if (k < count) this.taken.delete(k);
  }

  /** Entries remembered (handled, not yet known to be counted on chain). */
  get size(): number {
    return this.taken.size;
  }
}
