// The fast engine's state for the two programmes that are not order matching: referrals (a referred
// user's taker fees shared with its referrer for 90 days) and the forced-inclusion inbox (signed
// requests a user queued past the sequencer, included in order within 24 hours). Rules are in
// docs/engine.md ("Referrals", "Forced inclusion"); the reference engine keeps the same state in
// its own plain form, and the differential tests compare the two.
//
// Both tables are small and cold next to the books: a Map lookup per fill (skipped while nobody
// is referred) and an array per batch start are all the hot path pays.
import type {
  CanonicalDeadMan, CanonicalForcedRequest, CanonicalInboxEntry, CanonicalReferral,
} from './api.js';
import { emptyRequest, type Request } from './types.js';
import { Reject, REJECT_CODES } from './codes.js';

export interface ReferralEntry {
  referrer: number;
  active_until_ms: number;
  /** Shares paid so far, per asset index. */
  earned_units: Float64Array;
}

export class ReferralTable {
  private readonly entries = new Map<number, ReferralEntry>();
  private readonly asset_count: number;

  constructor(asset_count: number) {
    this.asset_count = asset_count;
  }

  get size(): number {
    return this.entries.size;
  }

  get(account: number): ReferralEntry | undefined {
    return this.entries.get(account);
  }

  add(account: number, referrer: number, active_until_ms: number): void {
    this.entries.set(account, { referrer, active_until_ms, earned_units: new Float64Array(this.asset_count) });
  }

  canonical(): CanonicalReferral[] {
    return [...this.entries.entries()].sort((x, y) => x[0] - y[0]).map(([account, e]) => ({
      account, referrer: e.referrer, active_until_ms: e.active_until_ms, earned_units: Array.from(e.earned_units),
    }));
  }

  load(rows: readonly CanonicalReferral[]): void {
    for (const row of rows) {
      this.add(row.account, row.referrer, row.active_until_ms);
      this.entries.get(row.account)!.earned_units.set(row.earned_units);
    }
  }
}

export interface InboxEntry {
  entry_id: number;
  account: number;
  envelope_nonce: number;
  queued_ms: number;
  deadline_ms: number;
  /** The payload's request, ready to apply (account = the entry's account). */
  request: Request;
  /** Reject.NONE, or the reason the front found the payload bad (refused at inclusion). */
  reject: number;
}

/** FIFO of forced-inclusion entries with a per-account count (the per-account limit). */
export class ForcedInbox {
  private entries: InboxEntry[] = [];
  private head = 0;
  private readonly per_account = new Map<number, number>();
  next_entry_id = 1;

  get size(): number {
    return this.entries.length - this.head;
  }

  countOf(account: number): number {
    return this.per_account.get(account) ?? 0;
  }

  peek(): InboxEntry {
    return this.entries[this.head];
  }

  push(e: InboxEntry): void {
    this.entries.push(e);
    this.per_account.set(e.account, this.countOf(e.account) + 1);
  }

  shift(): InboxEntry {
    const e = this.entries[this.head++];
    const n = this.countOf(e.account) - 1;
    if (n === 0) this.per_account.delete(e.account);
    else this.per_account.set(e.account, n);
    // Compact once the consumed prefix dominates, so the array does not grow forever.
    if (this.head > 64 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    return e;
  }

  canonical(): CanonicalInboxEntry[] {
    const rows: CanonicalInboxEntry[] = [];
    for (let i = this.head; i < this.entries.length; i++) {
      const e = this.entries[i];
      rows.push({
        entry_id: e.entry_id, account: e.account, envelope_nonce: e.envelope_nonce, queued_ms: e.queued_ms,
        deadline_ms: e.deadline_ms, request: forcedRequestOf(e.request, e.reject),
      });
    }
    return rows;
  }

  load(rows: readonly CanonicalInboxEntry[], next_entry_id: number): void {
    for (const row of rows) {
      this.push({
        entry_id: row.entry_id, account: row.account, envelope_nonce: row.envelope_nonce,
        queued_ms: row.queued_ms, deadline_ms: row.deadline_ms,
        request: requestOfForced(row.account, row.request), reject: row.request.reject,
      });
    }
    this.next_entry_id = next_entry_id;
  }
}

/** The fields a payload request carries besides its kind, account and nonce (and the verdict). */
type PayloadFields = Omit<CanonicalForcedRequest, 'kind' | 'nonce' | 'reject'>;

function payloadOf(kind: number, account: number, nonce: number, f: PayloadFields): Request {
  const r = emptyRequest();
  r.kind = kind;
  r.account = account;
  r.nonce = nonce;
  r.market = f.market;
  r.side = f.side;
  r.order_type = f.order_type;
  r.tif = f.tif;
  r.price_units = f.price_units;
  r.quantity_units = f.quantity_units;
  r.order_id = f.order_id;
  r.client_order_id = f.client_order_id;
  r.asset = f.asset;
  r.amount_units = f.amount_units;
  r.referrer_account = f.referrer_account;
  return r;
}

/** The payload's request as a FORCE_INCLUDE record carried it (envelope fields replaced). */
export function payloadRequest(envelope: Request): Request {
  return payloadOf(envelope.inner_kind, envelope.account, envelope.inner_nonce, envelope);
}

export function forcedRequestOf(r: Request, reject: number): CanonicalForcedRequest {
  return {
    kind: r.kind, nonce: r.nonce, market: r.market, side: r.side, order_type: r.order_type, tif: r.tif,
    price_units: r.price_units, quantity_units: r.quantity_units, order_id: r.order_id,
    client_order_id: r.client_order_id, asset: r.asset, amount_units: r.amount_units,
    referrer_account: r.referrer_account, reject,
  };
}

export function requestOfForced(account: number, f: CanonicalForcedRequest): Request {
  return payloadOf(f.kind, account, f.nonce, f);
}

/** A verdict the engine can record: a reject reason index (Reject.NONE = none). */
export function rejectReasonValid(reason: number): boolean {
  return Number.isSafeInteger(reason) && reason >= Reject.NONE && reason < REJECT_CODES.length;
}

/**
 * Armed dead-man switches: account -> deadline (batch time + timeout). Few accounts arm one (market
 * makers), so the earliest deadline is recomputed by a scan when the table changes, not kept in a
 * heap; the hot path reads only the cached `next_due_ms`.
 */
export class DeadManTable {
  private readonly deadlines = new Map<number, number>();
  /** The earliest deadline, Infinity when none is armed. */
  next_due_ms = Infinity;

  get size(): number {
    return this.deadlines.size;
  }

  get(account: number): number | undefined {
    return this.deadlines.get(account);
  }

  /** Arms (deadline_ms > 0) or disarms (null) the account's switch. */
  set(account: number, deadline_ms: number | null): void {
    if (deadline_ms === null) this.deadlines.delete(account);
    else this.deadlines.set(account, deadline_ms);
    let min = Infinity;
    for (const d of this.deadlines.values()) if (d < min) min = d;
    this.next_due_ms = min;
  }

  /** Accounts whose deadline is at or before `time_ms`, by (deadline, account) ascending. */
  due(time_ms: number): number[] {
    if (this.next_due_ms > time_ms) return [];
    const rows = [...this.deadlines.entries()].filter(([, d]) => d <= time_ms);
    rows.sort((x, y) => x[1] - y[1] || x[0] - y[0]);
    return rows.map(([account]) => account);
  }

  canonical(): CanonicalDeadMan[] {
    return [...this.deadlines.entries()].sort((x, y) => x[0] - y[0]).map(([account, deadline_ms]) => ({ account, deadline_ms }));
  }

  load(rows: readonly CanonicalDeadMan[]): void {
    for (const row of rows) this.set(row.account, row.deadline_ms);
  }
}
