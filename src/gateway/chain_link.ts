// The server's link to the settlement contract (docs/settlement.md), polled on the front thread:
//  - deposits: each Deposit event becomes a DEPOSIT request through the same matcher path as
//    POST /deposit, with the contract's deposit id as its nonce; the engine credits an id once
//    (its chain deposit high-water mark is engine state, journaled with the request), so a
//    restart that reads the same events again credits nothing twice;
//  - forced inclusions: each ForcedQueued event goes through POST /force-include's checks into
//    the engine's inbox;
//  - roots: every published batch's state and fills roots are posted, up to roots_per_tx_max
//    batches per transaction, with the count of queue entries the posted batches took in; each
//    round, also when its events stopped at an entry that cannot be handled yet (poll).
import type { SettlementSettings } from '../config/types.js';
import type { DaStore } from '../da/da_store.js';
import { emptyRequest, RequestKind, type Request } from '../engine/types.js';
import type { GatewayContext } from './context.js';
import type { Outcome } from './outcomes.js';
import { prepareForceInclude } from './routes_programmes.js';
import { encodeConsent, type Consent } from '../ring/consent.js';
import { SettlementContract, type DepositLog, type ForcedLog } from '../settlement/contract.js';
import { JsonRpc } from '../settlement/rpc.js';
import { componentLog } from '../util/log.js';

const log = componentLog('settlement');

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
   * engine's refusal; null while the entry waits in the engine's inbox (entry id kept).
   */
  private readonly forced_batch = new Map<number, { batch: number | null; entry_id: number }>();
  /** The contract's lastBatchId as last read (-1: not read yet). */
  posted_batch_id = -1;
  readonly status: ChainLinkStatus = {
    block: 0, deposits_credited: 0, forced_submitted: 0, forced_refused: 0, roots_posted_batch_id: 0, forced_processed: 0, last_error: null,
  };

  constructor(private readonly ctx: GatewayContext, private readonly store: DaStore | null, private readonly s: SettlementSettings) {
    if (s.rpc_url === null) throw new Error('ChainLink needs settlement.rpc_url');
    this.contract = new SettlementContract(new JsonRpc(s.rpc_url), s.contract);
    this.next_block = s.start_block;
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
    try {
      await this.readEvents();
    } catch (e) {
      events_error = e as Error;
    }
    let roots_error: Error | null = null;
    if (this.store !== null) {
      try {
        await this.postRoots(this.store);
      } catch (e) {
        roots_error = e as Error;
      }
    }
    if (events_error !== null && roots_error !== null && roots_error.message !== events_error.message) {
      throw new Error(`${events_error.message}; posting roots: ${roots_error.message}`);
    }
    if (events_error !== null) throw events_error;
    if (roots_error !== null) throw roots_error;
    this.status.last_error = null;
  }

  /** Deposits and forced entries from next_block on, in chain order; stops at the first failure. */
  private async readEvents(): Promise<void> {
    if (this.next_forced < 0) {
      this.next_forced = Number(await this.contract.readNumber('forcedProcessed'));
      this.status.forced_processed = this.next_forced;
    }
    const head = await this.contract.rpc.blockNumber();
    while (this.next_block <= head && !this.stopped) {
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
    const now = { batch: this.ctx.rm.batch_id, entry_id: 0 };
    const c = 'error' in prepared ? null : prepared.finish(await prepared.checks);
    if (c === null || !c.ok) {
      this.forced_batch.set(f.forced_id, now);
      this.status.forced_refused++;
      this.ctx.link.requestBatch();
    } else {
      const o = await this.submit(c.request, c.user, c.payload.referrer, c.consent);
      this.status.forced_submitted++;
      // Refused by the engine (an envelope nonce already used: say, queued before a restart).
      this.forced_batch.set(f.forced_id, o.accepted ? { batch: null, entry_id: o.order_id } : { batch: o.batch_id, entry_id: 0 });
    }
    this.next_forced = f.forced_id + 1;
  }

  /** How many queue entries, from the contract's count on, batches up to `batch_id` took in. */
  private forcedCountAt(batch_id: number, from: number): number {
    let k = from;
    for (;;) {
      const f = this.forced_batch.get(k);
      if (f === undefined) return k;
      if (f.batch === null) {
        const e = this.ctx.rm.programmes.entries.get(f.entry_id);
        if (e === undefined || e.included_batch_id <= 0) return k;
        f.batch = e.included_batch_id;
      }
      if (f.batch > batch_id) return k;
      k++;
    }
  }

  /** Whether queue entry `processed` (the first the contract has not counted) is handled and waits to be counted. */
  private forcedWaiting(processed: number): boolean {
    return this.forcedCountAt(Number.MAX_SAFE_INTEGER, processed) > processed;
  }

  private async postRoots(store: DaStore): Promise<void> {
    const posted = Number(await this.contract.readNumber('lastBatchId'));
    this.posted_batch_id = posted;
    this.status.roots_posted_batch_id = posted;
    const latest = store.latest();
    if (latest <= posted) {
      // Every batch is posted and a handled entry still waits to be counted (refused before the
      // engine after its batch was posted; or seen included only after): it needs a new batch. Asked
      // again each round while it waits, as one request can be lost (a cluster's leader failing over,
      // src/cluster/batch_request.ts); the matcher answers any number of them with one batch. The
      // contract's count is read only when this link's own says an entry waits.
      if (!this.forcedWaiting(this.status.forced_processed)) return;
      const processed = Number(await this.contract.readNumber('forcedProcessed'));
      if (this.forcedWaiting(processed)) this.ctx.link.requestBatch();
      return;
    }
    const last = Math.min(latest, posted + this.s.roots_per_tx_max);
    const states: string[] = [];
    const fills: string[] = [];
    for (let id = posted + 1; id <= last; id++) {
      const b = store.get(id);
      if (b === undefined) throw new Error(`published batch ${id} missing from the DA store`);
      states.push(b.header.state_root);
      fills.push(b.header.fills_root);
    }
    const processed = Number(await this.contract.readNumber('forcedProcessed'));
    const count = this.forcedCountAt(last, processed);
    const key = this.ctx.operator_key;
    await this.contract.postRoots(key, posted + 1, states, fills, count);
    for (let k = processed; k < count; k++) this.forced_batch.delete(k);
    this.status.roots_posted_batch_id = last;
    this.posted_batch_id = last;
    this.status.forced_processed = count;
  }
}
