// The roots the cluster's settlement poster may post (docs/settlement.md, "Roots in a cluster"): a
// batch's roots go on chain only once this DA role has compared them with the leader's header, and
// never from the first batch whose roots differed (an alarm: an operator decides). Compared are
// the state root this role computed for the batch AND the roots its store holds for it, which are
// the ones posted: after a restart the store's header of an earlier run is what the poster reads
// (the start path takes skipped batches' roots from the store and logs a recomputed difference
// without failing), so a check of the recomputed root alone could pass a stored root nobody
// compared. The DA role (da_role.ts) calls check() for every batch in stream order; the poster
// (settlement_poster.ts) reads it as its RootsSource.
import type { RootsSource } from '../settlement/roots_poster.js';

/** A batch header's roots (the leader's, or the store's). */
export interface BatchRootsPair {
  state_root: string;
  fills_root: string;
}

export class LeaderCheckedRoots implements RootsSource {
  /** The last batch compared with the leader's header (-1: none yet). */
  private checked_through = -1;
  /** The first batch whose roots differed from the leader's (-1: none). */
  first_mismatch = -1;

  constructor(private readonly store: { get(batch_id: number): { header: BatchRootsPair } | undefined }) {}

  /**
   * Batch `batch_id` applied: `computed_state_root` is the state root this role has for it (null:
   * none, e.g. the publisher failed or is not at this batch); `leader` the header's roots. Batch 0
   * (genesis) is not in the store and not posted: only its state root is compared. Returns whether
   * they agree. Batches come in order; a gap is a mismatch (nothing past it is postable).
   */
  check(batch_id: number, leader: BatchRootsPair, computed_state_root: string | null): boolean {
    let agree = batch_id === this.checked_through + 1 && computed_state_root === leader.state_root;
    if (agree && batch_id > 0) {
      const stored = this.store.get(batch_id)?.header;
      agree = stored !== undefined && stored.state_root === leader.state_root && stored.fills_root === leader.fills_root;
    }
    if (!agree && this.first_mismatch < 0) this.first_mismatch = batch_id;
    this.checked_through = Math.max(this.checked_through, batch_id);
    return agree;
  }

  /** The last batch whose roots may be posted: checked, and before the first mismatch. */
  latest(): number {
    const through = Math.max(0, this.checked_through);
    return this.first_mismatch < 0 ? through : Math.min(through, this.first_mismatch - 1);
  }

  get(batch_id: number): { header: BatchRootsPair } | undefined {
    return batch_id >= 1 && batch_id <= this.latest() ? this.store.get(batch_id) : undefined;
  }
}
