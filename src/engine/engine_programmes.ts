// The fast engine's referral, forced-inclusion and dead-man handlers (docs/engine.md, "REFER",
// "FORCE_INCLUDE", "CANCEL_AFTER", "Batch start", "Referrals"): one part of the engine
// (engine.ts), holding the state and the books. Their tables are in programmes.ts. An included
// inbox entry is applied like any request, through the engine it is given (RequestApplier).
import { mulDivFloor } from '../money/index.js';
import type { Books } from './engine_books.js';
import { assert, reject, type EngineState } from './engine_state.js';
import { approvalRejectReason } from './agents.js';
import { payloadRequest, rejectReasonValid, type InboxEntry } from './programmes.js';
import { FEE_ACCOUNT, NO_MARKET, RequestKind, type Request } from './types.js';
import { BalanceReason, UpdateReason, type EventSink } from './events.js';
import { deadManTimeoutValid, FORCE_INCLUSION_DEADLINE_MS, forcibleKind, REFERRAL_ACTIVE_MS, REFERRAL_SHARE_PERCENT } from './rules.js';
import { Reject, REJECT_CODES } from './codes.js';

/** What applies an included inbox entry's request: the engine, as for any request. */
export interface RequestApplier {
  apply(r: Request, out: EventSink): void;
}

export class Programmes {
  private readonly st: EngineState;
  private readonly books: Books;
  private readonly engine: RequestApplier;

  constructor(state: EngineState, books: Books, engine: RequestApplier) {
    this.st = state;
    this.books = books;
    this.engine = engine;
  }

  beginBatch(time_ms: number, out: EventSink): void {
    assert(Number.isSafeInteger(time_ms) && time_ms >= this.st.batch_time_ms, 'batch times are safe integers that never decrease');
    this.st.batch_time_ms = time_ms;
    // Dead-man switches first: their deadlines passed before anything of this batch.
    if (this.st.dead_man.next_due_ms <= time_ms) {
      for (const account of this.st.dead_man.due(time_ms)) this.fireDeadMan(account, out);
    }
    const inbox = this.st.inbox;
    while (inbox.size > 0 && inbox.peek().queued_ms + this.st.force_inclusion_hold_ms <= time_ms) {
      this.include(inbox.shift(), out);
    }
  }

  /**
   * When the oldest inbox entry or the earliest dead-man switch falls due (Infinity when neither
   * exists): the matcher starts a batch by then, even on an idle exchange.
   */
  nextDueMs(): number {
    const inbox = this.st.inbox.size === 0 ? Infinity : this.st.inbox.peek().queued_ms + this.st.force_inclusion_hold_ms;
    return Math.min(inbox, this.st.dead_man.next_due_ms);
  }

  /** A due switch: an engine-issued DEAD_MAN_CANCEL of every resting order of the account; the switch disarms. */
  private fireDeadMan(account: number, out: EventSink): void {
    this.st.dead_man.set(account, null);
    this.st.ledger.beginRequest();
    out.accepted(RequestKind.DEAD_MAN_CANCEL, account, 0);
    this.books.cancelAccountOrders(account, NO_MARKET, UpdateReason.DEAD_MAN_SWITCH, out);
    this.st.ledger.flush(out);
  }

  /** An opted-in connection closed: cancel every resting order; refused (nothing changes) when there is none. */
  disconnectCancel(r: Request, out: EventSink): void {
    const account = r.account;
    if (!this.st.accountValid(account)) return reject(r, out, Reject.ACCOUNT_UNKNOWN);
    // Refused rather than accepted-empty, so an address that never traded is not registered.
    if (this.st.ledger.open_orders[account] === 0) return reject(r, out, Reject.NOTHING_TO_CANCEL);
    out.accepted(RequestKind.DISCONNECT_CANCEL, account, 0);
    this.books.cancelAccountOrders(account, NO_MARKET, UpdateReason.DISCONNECT, out);
  }

  cancelAfter(r: Request, out: EventSink): void {
    const timeout_ms = r.amount_units;
    if (!deadManTimeoutValid(timeout_ms)) return reject(r, out, Reject.TIMEOUT_INVALID);
    this.st.acceptSigned(r, 0, out);
    this.st.dead_man.set(r.account, timeout_ms === 0 ? null : this.st.batch_time_ms + timeout_ms);
  }

  /** APPROVE_AGENT (src/engine/agents.ts): signed by the user; the agent is the second address. */
  approveAgent(r: Request, out: EventSink): void {
    const agent = r.agent_account;
    if (!this.st.accountValid(agent)) return reject(r, out, Reject.ACCOUNTS_MAX);
    if (agent === r.account) return reject(r, out, Reject.AGENT_SELF);
    const valid_until_ms = r.amount_units;
    const bad = approvalRejectReason(r.client_order_id, valid_until_ms, this.st.batch_time_ms);
    if (bad !== Reject.NONE) return reject(r, out, bad);
    const full = this.st.agents.checkApprove(r.account, agent, this.st.batch_time_ms);
    if (full !== Reject.NONE) return reject(r, out, full);
    this.st.ledger.ensure(agent);
    this.st.acceptSigned(r, 0, out);
    this.st.agents.approve(r.account, agent, r.client_order_id, valid_until_ms, this.st.batch_time_ms, out);
  }

  /** REVOKE_AGENT: signed by the user; the agent's entry (live or expired) leaves. */
  revokeAgent(r: Request, out: EventSink): void {
    if (!this.st.agents.has(r.account, r.agent_account)) return reject(r, out, Reject.AGENT_NOT_FOUND);
    this.st.acceptSigned(r, 0, out);
    this.st.agents.revoke(r.account, r.agent_account, out);
  }

  /** Applies an inbox entry's request as if it had just arrived; a payload found bad is refused with its reason. */
  private include(e: InboxEntry, out: EventSink): void {
    const r = e.request;
    out.inboxIncluded(e.entry_id, r);
    if (e.reject !== Reject.NONE) {
      out.rejected(r.kind, r.account, REJECT_CODES[e.reject], e.reject);
    } else if (!forcibleKind(r.kind)) {
      out.rejected(r.kind, r.account, REJECT_CODES[Reject.FORCED_KIND_INVALID], Reject.FORCED_KIND_INVALID);
    } else {
      this.engine.apply(r, out);
    }
  }

  refer(r: Request, out: EventSink): void {
    const account = r.account;
    const referrer = r.referrer_account;
    if (!this.st.accountValid(referrer)) return reject(r, out, Reject.REFERRER_UNKNOWN);
    if (referrer === account) return reject(r, out, Reject.SELF_REFERRAL);
    if (this.st.referrals.get(account) !== undefined) return reject(r, out, Reject.REFERRAL_EXISTS);
    this.st.ledger.ensure(referrer);
    this.st.acceptSigned(r, 0, out);
    const until = this.st.batch_time_ms + REFERRAL_ACTIVE_MS;
    this.st.referrals.add(account, referrer, until);
    out.referral(account, referrer, until);
  }

  /**
   * The envelope has its own nonce sequence per account (DECISIONS, "Forced inclusion"): it never
   * touches the trading high-water mark, which the payload's own nonce is checked against when the
   * entry is included. So a request signed at n and ignored can be wrapped at n + 1, or an
   * envelope at n can carry a payload signed at n + 1.
   */
  forceInclude(r: Request, out: EventSink): void {
    const account = r.account;
    if (!this.st.accountValid(account)) return reject(r, out, Reject.ACCOUNT_UNKNOWN);
    if (r.signer !== 0) return reject(r, out, Reject.AGENT_NOT_ALLOWED);
    this.st.ledger.ensure(account);
    if (!(r.nonce > (this.st.envelope_high_water.get(account) ?? 0))) return reject(r, out, Reject.ENVELOPE_NONCE_NOT_ABOVE_HIGH_WATER);
    if (!rejectReasonValid(r.inner_reject)) return reject(r, out, Reject.REQUEST_MALFORMED);
    if (this.st.inbox.size >= this.st.inbox_entries_max) return reject(r, out, Reject.INBOX_FULL);
    if (this.st.inbox.countOf(account) >= this.st.inbox_entries_per_account_max) return reject(r, out, Reject.INBOX_ACCOUNT_FULL);
    this.st.envelope_high_water.set(account, r.nonce);
    const entry_id = this.st.inbox.next_entry_id++;
    out.accepted(RequestKind.FORCE_INCLUDE, account, entry_id);
    const deadline = this.st.batch_time_ms + FORCE_INCLUSION_DEADLINE_MS;
    this.st.inbox.push({
      entry_id, account, envelope_nonce: r.nonce, queued_ms: this.st.batch_time_ms, deadline_ms: deadline,
      request: payloadRequest(r), reject: r.inner_reject,
    });
    out.inboxQueued(entry_id, account, r.inner_kind, r.inner_nonce, deadline, r.referrer_account, r.inner_reject);
  }

  /**
   * The referrer's share of a taker fee: 20% floored, moved from the fee account, and never more
   * than the fee account earned on this fill (`fee_income`), so a large maker rebate cannot turn
   * the fee account negative.
   */
  referralShare(fill_id: number, taker: number, quote: number, taker_fee: number, fee_income: number, out: EventSink): void {
    const ref = this.st.referrals.get(taker);
    if (ref === undefined || this.st.batch_time_ms >= ref.active_until_ms) return;
    // Exact floor(fee x 20 / 100) (fee / 5 in floats could round up near 2^53).
    let share = mulDivFloor(taker_fee, REFERRAL_SHARE_PERCENT, 100);
    if (share > fee_income) share = fee_income;
    if (share <= 0) return;
    const L = this.st.ledger;
    const a = this.st.asset_count;
    L.touch(ref.referrer, quote, BalanceReason.FILL);
    L.available[FEE_ACCOUNT * a + quote] -= share;
    L.available[ref.referrer * a + quote] += share;
    ref.earned_units[quote] += share;
    out.referralShare(fill_id, taker, ref.referrer, quote, share);
  }
}
