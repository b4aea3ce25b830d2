// The front's view of referrals and forced inclusions, built (like the rest of the read model) only
// from committed events: REFERRAL, REFERRAL_SHARE, INBOX_QUEUED, INBOX_INCLUDED, and the ACCEPTED /
// REJECTED event that answers an included request. It rebuilds itself on a restart because the
// journal replays the same events.
import {
  AcceptedField, EventType, InboxIncludedField, InboxQueuedField, ReferralField, ReferralShareField, RejectedField, type EventFields,
} from '../ring/event_records.js';
import { RequestKind } from '../engine/types.js';

export interface ReferralView {
  referred: number;
  referrer: number;
  active_until_ms: number;
  /** Shares paid to the referrer from this user's taker fees, per asset index. */
  earned_units: number[];
}

export interface InclusionResult {
  accepted: boolean;
  /** Engine code and reject reason (0 when accepted). */
  code: number;
  reason: number;
  /** The new or target order of an accepted order request (0 otherwise). */
  order_id: number;
}

export interface InboxView {
  entry_id: number;
  account: number;
  /** The payload's request kind (RequestKind) and nonce. */
  kind: number;
  payload_nonce: number;
  envelope_nonce: number;
  queued_ms: number;
  queued_batch_id: number;
  deadline_ms: number;
  included_ms: number;
  included_batch_id: number;
  result: InclusionResult | null;
}

/** Everything the model holds, as plain data (a snapshot's front part; docs/operations.md). */
export interface ProgrammesState {
  /** In registration order. */
  referrals: ReferralView[];
  referred_by: [number, number[]][];
  /** Every entry still held, ascending by id. */
  entries: InboxView[];
  /** Included entries still held, oldest inclusion first (the order they are forgotten in). */
  included_ids: number[];
  /** [account, last envelope nonce], ascending by account. */
  envelope_nonces: [number, number][];
}

/** Included entries kept for GET /force-include/:id (pending ones are always kept). */
const INCLUDED_ENTRIES_KEPT = 10_000;

export class ProgrammesModel {
  private declare readonly asset_count: number;
  /** Referred account -> its referral. */
  readonly referral_of = new Map<number, ReferralView>();
  /** Referrer account -> the accounts it referred, in registration order. */
  readonly referred_by = new Map<number, number[]>();
  readonly entries = new Map<number, InboxView>();
  /** Pending entries in inbox order (insertion order of the Map). */
  readonly pending = new Map<number, InboxView>();
  private readonly included_ids: number[] = [];
  private included_head = 0;
  /** The envelope nonce of the FORCE_INCLUDE just accepted (its ACCEPTED precedes INBOX_QUEUED). */
  private envelope_nonce = 0;
  /** Account -> its last force-include envelope nonce (apart from the trading mark). */
  readonly envelope_high_water = new Map<number, number>();
  /** The entry whose request's answer (ACCEPTED / REJECTED) comes next. */
  private including: InboxView | null = null;

  /**
   * The inbox entry `account` queued with envelope nonce `envelope_nonce` (pending, or included and
   * still held), or undefined. A rare lookup (a forced entry submitted again after a restart or a
   * chain reader takeover: src/gateway/chain_link.ts), so a scan of the held entries.
   */
  entryOf(account: number, envelope_nonce: number): InboxView | undefined {
    for (const e of this.entries.values()) if (e.account === account && e.envelope_nonce === envelope_nonce) return e;
    return undefined;
  }

  constructor(asset_count: number) {
    this.asset_count = asset_count;
  }

  /**
   * Whether an answer (ACCEPTED or REJECTED) of a request of `kind` changes anything here: one that
   * closes an included entry, or an accepted FORCE_INCLUDE. The read model asks before handing it
   * an answer (apply's switch and field reads for every answer cost ~100 instructions a request on
   * the load bench's flow, where no answer matters here; docs/benchmarks.md, h22m).
   */
  hearsAnswer(kind: number): boolean {
    return this.including !== null || kind === RequestKind.FORCE_INCLUDE;
  }

  /** Takes the events it cares about; `batch_id` and `time_ms` are the current batch's. */
  apply(e: EventFields, batch_id: number, time_ms: number): void {
    switch (e.type()) {
      case EventType.ACCEPTED:
        if (this.including !== null) {
          this.including.result = { accepted: true, code: 0, reason: 0, order_id: e.field(AcceptedField.ORDER_ID) };
          this.including = null;
        }
        if (e.field(AcceptedField.KIND) === RequestKind.FORCE_INCLUDE) {
          this.envelope_nonce = e.field(AcceptedField.NONCE);
          this.envelope_high_water.set(e.field(AcceptedField.ACCOUNT), e.field(AcceptedField.NONCE));
        }
        return;
      case EventType.REJECTED:
        if (this.including !== null) {
          this.including.result = {
            accepted: false, code: e.field(RejectedField.CODE), reason: e.field(RejectedField.REASON), order_id: 0,
          };
          this.including = null;
        }
        return;
      case EventType.REFERRAL: {
        const referred = e.field(ReferralField.REFERRED);
        const referrer = e.field(ReferralField.REFERRER);
        this.referral_of.set(referred, {
          referred, referrer, active_until_ms: e.field(ReferralField.ACTIVE_UNTIL_MS), earned_units: new Array<number>(this.asset_count).fill(0),
        });
        let list = this.referred_by.get(referrer);
        if (list === undefined) {
          list = [];
          this.referred_by.set(referrer, list);
        }
        list.push(referred);
        return;
      }
      case EventType.REFERRAL_SHARE: {
        const view = this.referral_of.get(e.field(ReferralShareField.REFERRED));
        if (view !== undefined) view.earned_units[e.field(ReferralShareField.ASSET)] += e.field(ReferralShareField.AMOUNT_UNITS);
        return;
      }
      case EventType.INBOX_QUEUED: {
        const entry: InboxView = {
          entry_id: e.field(InboxQueuedField.ENTRY_ID), account: e.field(InboxQueuedField.ACCOUNT),
          kind: e.field(InboxQueuedField.KIND), payload_nonce: e.field(InboxQueuedField.NONCE),
          envelope_nonce: this.envelope_nonce, queued_ms: time_ms, queued_batch_id: batch_id,
          deadline_ms: e.field(InboxQueuedField.DEADLINE_MS),
          included_ms: 0, included_batch_id: 0, result: null,
        };
        this.entries.set(entry.entry_id, entry);
        this.pending.set(entry.entry_id, entry);
        return;
      }
      case EventType.INBOX_INCLUDED: {
        const entry = this.entries.get(e.field(InboxIncludedField.ENTRY_ID));
        if (entry === undefined) return;
        this.pending.delete(entry.entry_id);
        entry.included_ms = time_ms;
        entry.included_batch_id = batch_id;
        this.including = entry;
        this.forgetOldIncluded(entry.entry_id);
        return;
      }
      default:
        return;
    }
  }

  exportState(): ProgrammesState {
    return {
      referrals: [...this.referral_of.values()].map((v) => ({ ...v, earned_units: [...v.earned_units] })),
      referred_by: [...this.referred_by].map(([k, list]) => [k, [...list]]),
      entries: [...this.entries.values()].sort((x, y) => x.entry_id - y.entry_id).map((e) => ({ ...e, result: e.result === null ? null : { ...e.result } })),
      included_ids: this.included_ids.slice(this.included_head),
      envelope_nonces: [...this.envelope_high_water].sort((x, y) => x[0] - y[0]),
    };
  }

  /** Loads an exported state into this fresh model (between batches: nothing is half-included). */
  importState(s: ProgrammesState): void {
    if (this.entries.size !== 0 || this.referral_of.size !== 0) throw new Error('programmes model: import needs a fresh model');
    for (const v of s.referrals) this.referral_of.set(v.referred, { ...v, earned_units: [...v.earned_units] });
    for (const [k, list] of s.referred_by) this.referred_by.set(k, [...list]);
    for (const e of s.entries) {
      const entry = { ...e, result: e.result === null ? null : { ...e.result } };
      this.entries.set(e.entry_id, entry);
      if (e.included_batch_id === 0) this.pending.set(e.entry_id, entry);
    }
    this.included_ids.push(...s.included_ids);
    for (const [account, n] of s.envelope_nonces) this.envelope_high_water.set(account, n);
  }

  private forgetOldIncluded(entry_id: number): void {
    this.included_ids.push(entry_id);
    if (this.included_ids.length - this.included_head > INCLUDED_ENTRIES_KEPT) {
      this.entries.delete(this.included_ids[this.included_head++]);
      if (this.included_head > 4096) {
        this.included_ids.splice(0, this.included_head);
        this.included_head = 0;
      }
    }
  }
}
