// The server's link to the settlement contract (docs/settlement.md), polled on the front thread:
//  - deposits: each Deposit event becomes a DEPOSIT request through the same matcher path as
//    POST /deposit, with the contract's deposit id as its nonce; the engine credits an id once
//    (its chain deposit high-water mark is engine state, journaled with the request), so a
//    restart that reads the same events again credits nothing twice;
//  - forced inclusions: each ForcedQueued event goes through POST /force-include's checks into
//    the engine's inbox;
//  - roots: every published batch's state and fills roots are posted (src/settlement/roots_poster.ts,
//    the same code as the cluster's DA role), with the count of queue entries the posted batches
//    took in (ForcedCount); each round, also when its events stopped at an entry that cannot be
//    handled yet (poll). A cluster gateway reads the events only while it holds the chain
//    reader lease (src/cluster/lease.ts ChainReaderLease: one reader in the cluster); it keeps
//    no DA store and posts nothing: it shares which batch took each entry in with the cluster's
//    poster, a DA role (src/cluster/settlement_poster.ts), and reads the contract's last posted
//    batch for the withdrawal signatures.
import type { SettlementSettings } from '../config/types.js';
import type { DaStore } from '../da/da_store_contract.js';
import { Reject } from '../engine/codes.js';
import { emptyRequest, RequestKind, type Request } from '../engine/types.js';
import type { GatewayContext } from './context.js';
import type { Outcome } from './outcomes.js';
import { prepareForceInclude } from './routes_programmes.js';
import { encodeConsent, type Consent } from '../ring/consent.js';
import { SettlementContract, type DepositLog, type ForcedLog } from '../settlement/contract.js';
import { JsonRpc } from '../settlement/rpc.js';
import { ForcedCount } from '../settlement/forced_count.js';
import { RootsPoster } from '../settlement/roots_poster.js';
import { componentLog } from '../util/log.js';

const log = componentLog('settlement');

/** Most entries one share of a cluster gateway carries (src/cluster/settlement_poster.ts's message). */
export const FORCED_SHARE_MAX = 512;

/**
 * A cluster gateway's way to tell the root poster which batch took each queue entry in: entries
 * `from`, `from + 1`, ... were taken in by `batches[0]`, `batches[1]`, ... (best effort, repeated
 * each round until the contract counts them).
 */
export type ForcedShare = (from: number, batches: readonly number[]) => void;

/** Whether this process is the cluster's chain reader now (src/cluster/lease.ts ChainReaderLease). */
export interface ChainReaderGate {
  holding(): boolean;
}

/** What the link did so far (GET /admin/state `settlement.link`). */
export interface ChainLinkStatus {
  block: number;
  deposits_credited: number;
  forced_submitted: number;
  /** Queue entries the front refused outright (not submitted; counted with the next batch's roots). */
  forced_refused: number;
  /** The contract's last posted batch (as this process last read or posted it). */
  roots_posted_batch_id: number;
  forced_processed: number;
  /** Whether this link reads the contract's events now (a cluster gateway: while it holds the chain reader lease). */
  reading: boolean;
  /** Times a cluster gateway's link started reading (took the lease); 0 in the single process. */
  reader_takeovers: number;
  last_error: string | null;
}

export class ChainLink {
  private readonly contract: SettlementContract;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  /** Next block whose events are read. */
  private next_block: number;
  /** Next queue id to submit (starts at the contract's forcedProcessed). */
  private next_forced = -1;
  /**
   * Queue id -> the batch that took it in: the entry's INBOX_INCLUDED batch, or the batch of the
   * engine's refusal (or of the front's, for an entry refused before the engine).
   */
  private readonly forced: ForcedCount;
  /** Posts the roots of this process's DA store (null: a cluster gateway, which shares `forced` instead). */
  private readonly poster: RootsPoster | null;
  /** The contract's lastBatchId as last read (-1: not read yet). */
  posted_batch_id = -1;
  readonly status: ChainLinkStatus = {
    block: 0, deposits_credited: 0, forced_submitted: 0, forced_refused: 0, roots_posted_batch_id: 0, forced_processed: 0, reading: false, reader_takeovers: 0, last_error: null,
  };
  /** Whether the last round read the events (a change to true resumes, see readEvents). */
  private was_reading = false;

  /**
   * `store`: the DA store whose roots this link posts; null in a cluster gateway, which posts
   * nothing and hands the forced entries' batches to `share` (null: no poster to tell).
   */
  constructor(private readonly ctx: GatewayContext, store: DaStore | null, private readonly s: SettlementSettings,
    private readonly share: ForcedShare | null = null, private readonly gate: ChainReaderGate | null = null) {
    if (s.rpc_url === null) throw new Error('ChainLink needs settlement.rpc_url');
    this.contract = new SettlementContract(new JsonRpc(s.rpc_url), s.contract);
    this.next_block = s.start_block;
    this.forced = new ForcedCount((entry_id) => ctx.rm.programmes.entries.get(entry_id)?.included_batch_id ?? 0);
    this.poster = store === null ? null : new RootsPoster({
      contract: this.contract, roots: store, forced: this.forced, requestBatch: () => ctx.link.requestBatch(),
      operator_key: ctx.operator_key, roots_per_tx_max: s.roots_per_tx_max,
    });
  }

  start(): void {
    const tick = (): void => {
      if (this.stopped) return;
      const failing = this.status.last_error;
      this.running = this.poll().then(() => {
        // The end of a failing stretch, logged once (its start was, below).
        if (failing !== null) log.info(`ringbook: settlement link: working again (after: ${failing})`);
      }, (e: unknown) => {
        const message = (e as Error).message;
        // Logged when it changes, not every poll_ms while an endpoint stays down or the verify
        // pool cannot check a forced entry's signatures (retried each round).
        if (message !== this.status.last_error) log.error(`ringbook: settlement link: ${message}`);
        this.status.last_error = message;
      }).finally(() => {
        this.running = null;
        if (!this.stopped) this.timer = setTimeout(tick, this.s.poll_ms);
      });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    await this.running;
  }

  /**
   * One round: new events in chain order, then the roots of newly published batches. The roots
   * are posted even when the events stopped midway (a forced entry whose signatures the verify
   * pool cannot check, the ring full): the contract asks nothing of a root about the queue (the
   * count posted with it only claims entries already taken in, and a waiting entry's deadline
   * runs whether roots are posted or not), while withdrawal signatures and the escape root wait
   * for roots. The entry that stopped the events is not counted (forcedCountAt stops at an entry
   * not handled) and is retried on the next round. Both failures are reported, the events' first.
   */
  async poll(): Promise<void> {
    let events_error: Error | null = null;
    const reading = this.gate === null || this.gate.holding();
    if (reading && !this.was_reading && this.gate !== null) {
      // Taking over from another gateway: the queue position is read from the contract again (below).
      this.status.reader_takeovers++;
      this.resume_forced = true;
    }
    this.was_reading = reading;
    this.status.reading = reading;
    try {
      if (reading) await this.readEvents();
    } catch (e) {
      events_error = e as Error;
    }
    let roots_error: Error | null = null;
    try {
      if (this.poster !== null) await this.postRoots(this.poster);
      else await this.shareForced();
    } catch (e) {
      roots_error = e as Error;
    }
    if (events_error !== null && roots_error !== null && roots_error.message !== events_error.message) {
      throw new Error(`${events_error.message}; posting roots: ${roots_error.message}`);
    }
    if (events_error !== null) throw events_error;
    if (roots_error !== null) throw roots_error;
    this.status.last_error = null;
  }

  /** Set when a cluster gateway's link (re)starts reading: next_forced is read from the contract. */
  private resume_forced = false;

  /**
   * Deposits and forced entries from next_block on, in chain order; stops at the first failure.
   * Where a reader starts (the single process, or a cluster gateway taking the chain reader lease
   * over): the blocks from its own next_block, which is `settlement.start_block` until this process
   * read further itself, so no event after the blocks this process handled is skipped, whoever
   * handled it. Deposits already credited are skipped by the engine's high-water mark (engine
   * state the read model follows from the event stream, whoever submitted them); forced entries
   * below the contract's forcedProcessed (and below this link's own position) are skipped; an
   * entry another reader queued but the contract has not counted yet is submitted again and the
   * engine refuses the repeated envelope nonce (counted at the refusal's batch, which is early if
   * the original still waits in the engine's inbox: docs/settlement.md, "One chain reader").
   */
  private async readEvents(): Promise<void> {
    if (this.next_forced < 0 || this.resume_forced) {
      this.resume_forced = false;
      this.next_forced = Math.max(this.next_forced, Number(await this.contract.readNumber('forcedProcessed')));
      this.status.forced_processed = this.next_forced;
      if (this.poster !== null && this.poster.forced_processed < 0) this.poster.forced_processed = this.next_forced;
    }
    const head = await this.contract.rpc.blockNumber();
    // A reader that lost the lease stops between ranges (its renewals run on their own timer).
    while (this.next_block <= head && !this.stopped && (this.gate === null || this.gate.holding())) {
      const to = Math.min(head, this.next_block + this.s.logs_blocks_max - 1);
      const { deposits, forced } = await this.contract.events(this.next_block, to);
      for (const d of deposits) await this.credit(d);
      for (const f of forced) await this.queueForced(f);
      this.next_block = to + 1;
      this.status.block = to;
    }
  }

  /** Deposits carry no consent (an unsigned request, like POST /deposit's); forced entries the user's. */
  private submit(r: Request, user: string, referrer: string | null = null, consent: Consent | null = null): Promise<Outcome> {
    const p = this.ctx.link.requests.submit(r, Buffer.from(user.slice(2), 'hex'), user, referrer === null ? null : Buffer.from(referrer.slice(2), 'hex'),
      consent === null ? null : encodeConsent(consent));
    if (p === null) throw new Error('the request ring is full; retried on the next poll');
    return p;
  }

  private async credit(d: DepositLog): Promise<void> {
    // Already credited (the engine would refuse it anyway: its id is at or below the mark).
    if (d.deposit_id <= this.ctx.rm.chain_deposit_high_water) return;
    const r = emptyRequest();
    r.kind = RequestKind.DEPOSIT;
    r.asset = d.asset;
    r.amount_units = d.units;
    r.nonce = d.deposit_id;
    const o = await this.submit(r, d.user);
    if (o.accepted) this.status.deposits_credited++;
    else log.error(`ringbook: settlement link: chain deposit ${d.deposit_id} of ${d.user} refused (code ${o.code}, reason ${o.reason})`);
  }

  private async queueForced(f: ForcedLog): Promise<void> {
    if (f.forced_id < this.next_forced) return;
    // next_forced moves only once the entry is handled: a round that fails midway (the ring
    // full, the endpoint gone) retries it, never skips it (a skipped entry would let anyone
    // freeze the contract 24 h later).
    const body = { user: f.user, payload: f.payload, nonce: f.nonce, signature: f.signature };
    const prepared = prepareForceInclude(this.ctx, body);
    // The contract checked the envelope signature, so a refusal here is an envelope the front
    // cannot queue at all (say a nonce above 2^53-1, which the contract's uint64 allows): nothing
    // to include, processed now. Its count is posted only with roots, and that batch may be posted
    // already: on an idle exchange no new root would come, and 24 h later anyone could freeze the
    // contract over an entry handled long ago. So the sequencer is asked for a batch (an empty one
    // if nothing else comes), whose roots carry the count.
    const now = this.ctx.rm.batch_id;
    const c = 'error' in prepared ? null : prepared.finish(await prepared.checks);
    if (c === null || !c.ok) {
      this.forced.handled(f.forced_id, now);
      this.status.forced_refused++;
      this.ctx.link.requestBatch();
    } else {
      const o = await this.submit(c.request, c.user, c.payload.referrer, c.consent);
      this.status.forced_submitted++;
      if (o.accepted) this.forced.queued(f.forced_id, o.order_id);
      else this.refusedForced(f, o);
    }
    this.next_forced = f.forced_id + 1;
  }

  /**
   * The engine refused a queue entry. Its envelope nonce already used is the usual case: this
   * process queued it before a restart, or the reader before a takeover did (they start again at
   * the contract's count). If that earlier entry is still in the inbox, the entry is taken in by
   * the batch that includes it, not by this refusal's batch: counted at the refusal, its count
   * would reach the contract before its inclusion. Otherwise (no such entry, or another reason)
   * the refusal's batch took it in.
   */
  private refusedForced(f: ForcedLog, o: Outcome): void {
    const rm = this.ctx.rm;
    const account = o.reason === Reject.ENVELOPE_NONCE_NOT_ABOVE_HIGH_WATER ? rm.account_by_address.get(f.user.toLowerCase()) : undefined;
    const earlier = account === undefined ? undefined : rm.programmes.entryOf(account, f.nonce);
    if (earlier === undefined) this.forced.handled(f.forced_id, o.batch_id);
    else if (earlier.included_batch_id > 0) this.forced.handled(f.forced_id, earlier.included_batch_id);
    else this.forced.queued(f.forced_id, earlier.entry_id);
  }

  /** The single process: this store's roots with the count (src/settlement/roots_poster.ts). */
  private async postRoots(poster: RootsPoster): Promise<void> {
    try {
      await poster.post();
    } finally {
      this.posted_batch_id = poster.posted_batch_id;
      this.status.roots_posted_batch_id = Math.max(0, poster.posted_batch_id);
      if (poster.forced_processed >= 0) this.status.forced_processed = poster.forced_processed;
    }
  }

  /**
   * A cluster gateway: reads the contract's last posted batch (withdrawal signatures wait for it)
   * and, while an entry it handled is not counted on chain, shares which batches took the entries
   * in with the cluster's root poster, each round (the message is not acknowledged). The contract's
   * count is read only while this link remembers an entry.
   */
  private async shareForced(): Promise<void> {
    const posted = Number(await this.contract.readNumber('lastBatchId'));
    this.posted_batch_id = posted;
    this.status.roots_posted_batch_id = posted;
    if (this.forced.size === 0) return;
    const processed = Number(await this.contract.readNumber('forcedProcessed'));
    this.status.forced_processed = processed;
    this.forced.forgetBelow(processed);
    const batches = this.forced.batchesFrom(processed, FORCED_SHARE_MAX);
    if (batches.length > 0 && this.share !== null) this.share(processed, batches);
  }
}
