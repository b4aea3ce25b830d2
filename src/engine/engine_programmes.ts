// The fast engine's referral and forced-inclusion handlers (docs/engine.md, "REFER",
// "FORCE_INCLUDE", "Batch start", "Referrals"), between the state (engine_state.ts) and the
// request handlers and matching loop (engine.ts), which call them. Their tables are in
// programmes.ts.
import { mulDivFloor } from '../money/index.js';
import { assert, EngineState } from './engine_state.js';
import { approvalRejectReason } from './agents.js';
import { payloadRequest, rejectReasonValid, type InboxEntry } from './programmes.js';
import {
  BalanceReason, deadManTimeoutValid, FEE_ACCOUNT, FORCE_INCLUSION_DEADLINE_MS, forcibleKind, NO_MARKET,
  REFERRAL_ACTIVE_MS, REFERRAL_SHARE_PERCENT, Reject, REJECT_CODES, RequestKind, UpdateReason,
  type EventSink, type Request,
} from './types.js';

export abstract class ProgrammeState extends EngineState {
  /** Applies one request (FastEngine): included inbox entries go through it like any request. */
  abstract apply(r: Request, out: EventSink): void;

  beginBatch(time_ms: number, out: EventSink): void {
    assert(Number.isSafeInteger(time_ms) && time_ms >= this.batch_time_ms, 'batch times are safe integers that never decrease');
    this.batch_time_ms = time_ms;
    // Dead-man switches first: their deadlines passed before anything of this batch.
    if (this.dead_man.next_due_ms <= time_ms) {
      for (const account of this.dead_man.due(time_ms)) this.fireDeadMan(account, out);
    }
    const inbox = this.inbox;
    while (inbox.size > 0 && inbox.peek().queued_ms + this.force_inclusion_hold_ms <= time_ms) {
      this.include(inbox.shift(), out);
    }
  }

  /**
   * When the oldest inbox entry or the earliest dead-man switch falls due (Infinity when neither
   * exists): the matcher starts a batch by then, even on an idle exchange.
   */
  nextDueMs(): number {
    const inbox = this.inbox.size === 0 ? Infinity : this.inbox.peek().queued_ms + this.force_inclusion_hold_ms;
    return Math.min(inbox, this.dead_man.next_due_ms);
  }

  /** A due switch: an engine-issued DEAD_MAN_CANCEL of every resting order of the account; the switch disarms. */
  private fireDeadMan(account: number, out: EventSink): void {
    this.dead_man.set(account, null);
    this.ledger.beginRequest();
    out.accepted(RequestKind.DEAD_MAN_CANCEL, account, 0);
    this.cancelAccountOrders(account, NO_MARKET, UpdateReason.DEAD_MAN_SWITCH, out);
    this.ledger.flush(out);
  }

  /** An opted-in connection closed: cancel every resting order; refused (nothing changes) when there is none. */
  protected disconnectCancel(r: Request, out: EventSink): void {
    const account = r.account;
    if (!this.accountValid(account)) return this.reject(r, out, Reject.ACCOUNT_UNKNOWN);
    // Refused rather than accepted-empty, so an address that never traded is not registered.
    if (this.ledger.open_orders[account] === 0) return this.reject(r, out, Reject.NOTHING_TO_CANCEL);
    out.accepted(RequestKind.DISCONNECT_CANCEL, account, 0);
    this.cancelAccountOrders(account, NO_MARKET, UpdateReason.DISCONNECT, out);
  }

  protected cancelAfter(r: Request, out: EventSink): void {
    const reason = this.checkSigned(r);
    if (reason !== Reject.NONE) return this.reject(r, out, reason);
    const timeout_ms = r.amount_units;
    if (!deadManTimeoutValid(timeout_ms)) return this.reject(r, out, Reject.TIMEOUT_INVALID);
    this.acceptSigned(r, 0, out);
    this.dead_man.set(r.account, timeout_ms === 0 ? null : this.batch_time_ms + timeout_ms);
  }

  /** APPROVE_AGENT (src/engine/agents.ts): signed by the user; the agent is the second address. */
  protected approveAgent(r: Request, out: EventSink): void {
    const reason = this.checkSigned(r);
    if (reason !== Reject.NONE) return this.reject(r, out, reason);
    const agent = r.agent_account;
    if (!this.accountValid(agent)) return this.reject(r, out, Reject.ACCOUNTS_MAX);
    if (agent === r.account) return this.reject(r, out, Reject.AGENT_SELF);
    const valid_until_ms = r.amount_units;
    const bad = approvalRejectReason(r.client_order_id, valid_until_ms, this.batch_time_ms);
    if (bad !== Reject.NONE) return this.reject(r, out, bad);
    const full = this.agents.checkApprove(r.account, agent, this.batch_time_ms);
    if (full !== Reject.NONE) return this.reject(r, out, full);
    this.ledger.ensure(agent);
    this.acceptSigned(r, 0, out);
    this.agents.approve(r.account, agent, r.client_order_id, valid_until_ms, this.batch_time_ms, out);
  }

  /** REVOKE_AGENT: signed by the user; the agent's entry (live or expired) leaves. */
  protected revokeAgent(r: Request, out: EventSink): void {
    const reason = this.checkSigned(r);
    if (reason !== Reject.NONE) return this.reject(r, out, reason);
    if (!this.agents.has(r.account, r.agent_account)) return this.reject(r, out, Reject.AGENT_NOT_FOUND);
    this.acceptSigned(r, 0, out);
    this.agents.revoke(r.account, r.agent_account, out);
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
      this.apply(r, out);
    }
  }

  protected refer(r: Request, out: EventSink): void {
    const reason = this.checkSigned(r);
    if (reason !== Reject.NONE) return this.reject(r, out, reason);
    const account = r.account;
    const referrer = r.referrer_account;
    if (!this.accountValid(referrer)) return this.reject(r, out, Reject.REFERRER_UNKNOWN);
    if (referrer === account) return this.reject(r, out, Reject.SELF_REFERRAL);
    if (this.referrals.get(account) !== undefined) return this.reject(r, out, Reject.REFERRAL_EXISTS);
    this.ledger.ensure(referrer);
    this.acceptSigned(r, 0, out);
    const until = this.batch_time_ms + REFERRAL_ACTIVE_MS;
    this.referrals.add(account, referrer, until);
    out.referral(account, referrer, until);
  }

  /**
   * The envelope has its own nonce sequence per account (DECISIONS, "Forced inclusion"): it never
   * touches the trading high-water mark, which the payload's own nonce is checked against when the
   * entry is included. So a request signed at n and ignored can be wrapped at n + 1, or an
   * envelope at n can carry a payload signed at n + 1.
   */
  protected forceInclude(r: Request, out: EventSink): void {
    const account = r.account;
    if (!this.accountValid(account)) return this.reject(r, out, Reject.ACCOUNT_UNKNOWN);
    if (r.signer !== 0) return this.reject(r, out, Reject.AGENT_NOT_ALLOWED);
    this.ledger.ensure(account);
    if (!(r.nonce > (this.envelope_high_water.get(account) ?? 0))) return this.reject(r, out, Reject.ENVELOPE_NONCE_NOT_ABOVE_HIGH_WATER);
    if (!rejectReasonValid(r.inner_reject)) return this.reject(r, out, Reject.REQUEST_MALFORMED);
    if (this.inbox.size >= this.inbox_entries_max) return this.reject(r, out, Reject.INBOX_FULL);
    if (this.inbox.countOf(account) >= this.inbox_entries_per_account_max) return this.reject(r, out, Reject.INBOX_ACCOUNT_FULL);
    this.envelope_high_water.set(account, r.nonce);
    const entry_id = this.inbox.next_entry_id++;
    out.accepted(RequestKind.FORCE_INCLUDE, account, entry_id);
    const deadline = this.batch_time_ms + FORCE_INCLUSION_DEADLINE_MS;
    this.inbox.push({
      entry_id, account, envelope_nonce: r.nonce, queued_ms: this.batch_time_ms, deadline_ms: deadline,
      request: payloadRequest(r), reject: r.inner_reject,
    });
    out.inboxQueued(entry_id, account, r.inner_kind, r.inner_nonce, deadline, r.referrer_account, r.inner_reject);
  }

  /**
   * The referrer's share of a taker fee: 20% floored, moved from the fee account, and never more
   * than the fee account earned on this fill (`fee_income`), so a large maker rebate cannot turn
   * the fee account negative.
   */
  protected referralShare(fill_id: number, taker: number, quote: number, taker_fee: number, fee_income: number, out: EventSink): void {
    const ref = this.referrals.get(taker);
    if (ref === undefined || this.batch_time_ms >= ref.active_until_ms) return;
    // Exact floor(fee x 20 / 100) (fee / 5 in floats could round up near 2^53).
    let share = mulDivFloor(taker_fee, REFERRAL_SHARE_PERCENT, 100);
    if (share > fee_income) share = fee_income;
    if (share <= 0) return;
    const L = this.ledger;
    const a = this.asset_count;
    L.touch(ref.referrer, quote, BalanceReason.FILL);
    L.available[FEE_ACCOUNT * a + quote] -= share;
    L.available[ref.referrer * a + quote] += share;
    ref.earned_units[quote] += share;
    out.referralShare(fill_id, taker, ref.referrer, quote, share);
  }
}
