// Posting roots to the settlement contract (docs/settlement.md, "Roots"): every published batch's
// state and fills roots, at most roots_per_tx_max batches per transaction, with the count of
// forced-inclusion queue entries those batches took in (ForcedCount). One implementation for the
// single process's chain link (src/gateway/chain_link.ts, its DA store) and the cluster's DA role
// (src/cluster/settlement_poster.ts, its own store). With every batch posted and a taken-in entry
// still uncounted, it asks the sequencer for a batch each round: the count travels only with roots.
import type { SettlementContract } from './contract.js';
import type { ForcedCount } from './forced_count.js';

/** The roots of published batches (the DA store). */
export interface RootsSource {
  /** The last published batch (0: none after genesis). */
  latest(): number;
  get(batch_id: number): { header: { state_root: string; fills_root: string } } | undefined;
}

export interface RootsPosterOptions {
  contract: SettlementContract;
  roots: RootsSource;
  forced: ForcedCount;
  /** Asks the sequencer for a batch soon (an empty one if nothing else comes). */
  requestBatch: () => void;
  /**
   * Posting stopped for good before the last published batch (a cluster poster's roots differed
   * from the leader's: src/cluster/checked_roots.ts). A new batch could never be posted then, so
   * none is asked for. Absent: never stops (the single process).
   */
  stopped?: () => boolean;
  /**
   * Checked right before each transaction: false sends none this round (a cluster poster whose
   * lease lapsed while it read the contract: another may be posting). Absent: always sends.
   */
  may_send?: () => boolean;
  /**
   * Before posting on top of a lastBatchId this poster did not post itself (its first round, a
   * takeover, another poster's transaction), compare the contract's roots of that batch with its
   * own: a chain holding another history (a second cluster or a wiped store pointed at the same
   * contract, a poster that went wrong) must not be extended. A difference stops this poster for
   * good (chain_differs_batch_id). Absent: not compared (the single process).
   */
  check_chain_base?: boolean;
  operator_key: string;
  roots_per_tx_max: number;
}

export class RootsPoster {
  /** The contract's lastBatchId as last read or posted (-1: not read yet). */
  posted_batch_id = -1;
  /** The contract's forcedProcessed as last read or posted (-1: not read yet). */
  forced_processed = -1;
  /** Batch requests this poster sent (every batch posted, an entry uncounted). */
  batch_requests = 0;
  /** The batch whose roots on chain differed from this poster's (check_chain_base; -1: none): it posts nothing more. */
  chain_differs_batch_id = -1;
  /** The last batch whose roots on chain are known to be this poster's (compared, or posted by it). */
  private base_agreed = 0;

  constructor(private readonly o: RootsPosterOptions) {}

  /** One round: post the roots of batches published since the contract's last one, or ask for a batch. */
  async post(): Promise<void> {
    const { contract, roots, forced } = this.o;
    const posted = Number(await contract.readNumber('lastBatchId'));
    this.posted_batch_id = posted;
    if (this.chain_differs_batch_id >= 0) return;
    if (this.forced_processed < 0) this.forced_processed = Number(await contract.readNumber('forcedProcessed'));
    const latest = roots.latest();
    if (latest <= posted) {
      // Every batch is posted and a handled entry still waits to be counted (refused before the
      // engine after its batch was posted; or seen included only after): it needs a new batch. Asked
      // again each round while it waits, as one request can be lost (a cluster's leader failing over,
      // src/cluster/batch_request.ts); the matcher answers any number of them with one batch. The
      // contract's count is read only when this poster's own says an entry waits.
      if (!forced.waiting(this.forced_processed) || this.o.stopped?.() === true) return;
      const processed = Number(await contract.readNumber('forcedProcessed'));
      this.forced_processed = processed;
      forced.forgetBelow(processed);
      if ((await this.countUpTo(Number.MAX_SAFE_INTEGER, processed)) > processed) {
        this.batch_requests++;
        this.o.requestBatch();
      }
      return;
    }
    if (this.o.check_chain_base === true && posted !== this.base_agreed && !(await this.chainAgrees(posted))) return;
    const last = Math.min(latest, posted + this.o.roots_per_tx_max);
    const states: string[] = [];
    const fills: string[] = [];
    for (let id = posted + 1; id <= last; id++) {
      const b = roots.get(id);
      if (b === undefined) throw new Error(`published batch ${id} missing from the DA store`);
      states.push(b.header.state_root);
      fills.push(b.header.fills_root);
    }
    const processed = Number(await contract.readNumber('forcedProcessed'));
    const count = await this.countUpTo(last, processed);
    if (this.o.may_send?.() === false) return;
    await contract.postRoots(this.o.operator_key, posted + 1, states, fills, count);
    forced.forgetBelow(count);
    this.base_agreed = last;
    this.posted_batch_id = last;
    this.forced_processed = count;
  }

  /** Whether the contract's roots of batch `id` (at most the last published) are this poster's; a difference stops it. */
  private async chainAgrees(id: number): Promise<boolean> {
    const mine = this.o.roots.get(id);
    if (mine === undefined) throw new Error(`published batch ${id} missing from the DA store`);
    const [state] = await this.o.contract.read('stateRoots', [id]);
    const [fills] = await this.o.contract.read('fillsRoots', [id]);
    const same = (a: unknown, b: string): boolean => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();
    if (!same(state, mine.header.state_root) || !same(fills, mine.header.fills_root)) {
      this.chain_differs_batch_id = id;
      return false;
    }
    this.base_agreed = id;
    return true;
  }

  /**
   * The count of entries batches up to `last` took in, from the contract's `processed` on, never
   * past the contract's queue: an entry this poster was told of that is not on chain (a cluster
   * poster hears the batches from the gateways, src/cluster/settlement_poster.ts) would make every
   * postRoots revert BadForcedCount and stop the roots for good. The queue's length is read only
   * when an entry is to be counted.
   */
  private async countUpTo(last: number, processed: number): Promise<number> {
    const count = this.o.forced.countAt(last, processed);
    if (count === processed) return count;
    const queued = Number(await this.o.contract.readNumber('forcedCount'));
    return Math.max(processed, Math.min(count, queued));
  }
}
