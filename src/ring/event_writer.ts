// the event ring under the named fields of event_records.ts (the layout, the names and the readers
// the front uses; records.ts has what events share with requests).
import type { Request } from '../engine/types.js';
import { WordsRequest as WordsRequest_ } from '../engine/client_id.js';
import type { EventSink, MarketInfo } from '../engine/events.js';
import type { SpscRing } from './spsc_ring.js';
import { ADDRESS_BYTES as ADDRESS_BYTES_, bytesOf, writeAscii } from './records.js';
import * as layout from './event_records.js';

// Module-local copies of the layout's constants. An imported binding is a live cell: optimized
// code loads it and checks it for the hole (TDZ) at every use, and for an imported object also
// checks its map before each field load; a module-local const is folded into an immediate. The
// writers below use ~50 of them per replayed request (docs/benchmarks.md, h16r: a 3-field store
// sequence compiled to 372 bytes against 616 with the imports).
const ADDRESS_BYTES = ADDRESS_BYTES_;
const WordsRequest = WordsRequest_;
const EV_ADDRESS_WORD = layout.EV_ADDRESS_WORD;
const EV_CLIENT_ID_LENGTH_WORD = layout.EV_CLIENT_ID_LENGTH_WORD;
const EV_CLIENT_ID_WORD = layout.EV_CLIENT_ID_WORD;
const EV_FIELD0_F64 = layout.EV_FIELD0_F64;
const EV_SEQ_F64 = layout.EV_SEQ_F64;
const EV_TYPE_WORD = layout.EV_TYPE_WORD;
const EventType = layout.EventType;
const AcceptedField = layout.AcceptedField;
const AccountField = layout.AccountField;
const AgentField = layout.AgentField;
const BalanceField = layout.BalanceField;
const BatchField = layout.BatchField;
const CreditField = layout.CreditField;
const FeesField = layout.FeesField;
const FillField = layout.FillField;
const InboxIncludedField = layout.InboxIncludedField;
const InboxQueuedField = layout.InboxQueuedField;
const MarketField = layout.MarketField;
const OrderUpdateField = layout.OrderUpdateField;
const ReferralField = layout.ReferralField;
const ReferralShareField = layout.ReferralShareField;
const RejectedField = layout.RejectedField;

/**
 * The matcher's EventSink: writes each event as a record tagged with the current request's seq.
 * A full ring makes the matcher wait (backpressure reaches the front through the request ring).
 */
export class EventWriter implements EventSink {
  private declare readonly ring: SpscRing;
  private declare readonly u8: Uint8Array;
  /**
   * The ring's own views (SpscRing's are readonly: fixed for the ring's life), held here so that
   * a field store is one load of the view from the writer, not two (the ring, then its view).
   */
  private declare readonly f64: Float64Array;
  private declare readonly i32: Int32Array;
  /** The request whose events are being written. */
  seq = 0;
  current: Request | null = null;
  /** Whether the last request answered was accepted (the matcher's side events depend on it). */
  last_accepted = false;
  private claimed = 0;
  wait_timeout_ms = 1000;
  /**
   * Addresses the matcher registered for the request being applied (the signer, and a referrer it
   * names): their ACCOUNT events are written right after the request's ACCEPTED, before any event
   * that uses the ids; a refused request writes none (the matcher then takes the ids back).
   */
  private readonly new_ids: number[] = [];
  private readonly new_offsets: number[] = [];
  private new_bytes: Uint8Array | null = null;

  constructor(ring: SpscRing) {
    this.ring = ring;
    this.u8 = bytesOf(ring);
    this.f64 = ring.f64;
    this.i32 = ring.i32;
  }

  private claim(type: number): number {
    let o = this.ring.tryClaim();
    while (o < 0) {
      this.flush();
      this.ring.waitForSpace(this.wait_timeout_ms);
      if (this.ring.isClosed()) throw new Error('event ring closed');
      o = this.ring.tryClaim();
    }
    this.claimed++;
    this.f64[(o >> 1) + EV_SEQ_F64] = this.seq;
    this.i32[o + EV_TYPE_WORD] = type;
    return o;
  }

  /**
   * Publishes everything claimed so far; `quiet` does not wake a sleeping front (a batch's events
   * before its commit marker: the front can answer nothing before the marker, so one wake-up per
   * batch is enough; SpscRing "Quiet publishing").
   */
  flush(quiet = false): void {
    if (this.claimed > 0) {
      if (quiet) this.ring.publishBatchQuiet(this.claimed);
      else this.ring.publishBatch(this.claimed);
      this.claimed = 0;
    }
  }

  private fields(o: number): number {
    return (o >> 1) + EV_FIELD0_F64;
  }

  accepted(kind: number, account: number, order_id: number): void {
    this.last_accepted = true;
    const o = this.claim(EventType.ACCEPTED);
    const f = this.f64;
    const b = this.fields(o);
    const r = this.current;
    f[b + AcceptedField.KIND] = kind;
    f[b + AcceptedField.ACCOUNT] = account;
    f[b + AcceptedField.ORDER_ID] = order_id;
    if (r !== null) {
      // An agent's nonce is not the user's: NONCE is 0 (no accepted request has nonce 0) and the
      // AGENT event right after carries the agent's new mark.
      f[b + AcceptedField.NONCE] = r.signer === 0 ? r.nonce : 0;
      f[b + AcceptedField.MARKET] = r.market;
      f[b + AcceptedField.SIDE] = r.side;
      f[b + AcceptedField.ORDER_TYPE] = r.order_type;
      f[b + AcceptedField.TIF] = r.tif;
      f[b + AcceptedField.PRICE_UNITS] = r.price_units;
      f[b + AcceptedField.QUANTITY_UNITS] = r.quantity_units;
      f[b + AcceptedField.ASSET] = r.asset;
      f[b + AcceptedField.AMOUNT_UNITS] = r.amount_units;
      f[b + AcceptedField.REQUEST_ORDER_ID] = r.order_id;
      // A WordsRequest's words unless its id is one no record carries (an assigned string: length -1).
      if (r instanceof WordsRequest && r.client_id[0] >= 0) {
        this.clientIdWords(o, r.client_id);
      } else {
        const coid = r.client_order_id;
        this.i32[o + EV_CLIENT_ID_LENGTH_WORD] = coid.length;
        writeAscii(this.u8, (o + EV_CLIENT_ID_WORD) * 4, coid);
      }
    } else {
      this.i32[o + EV_CLIENT_ID_LENGTH_WORD] = 0;
    }
    if (this.new_ids.length > 0) this.announceNew();
  }

  /**
   * The client id of a WordsRequest into record `o` by words (no string made): the same bytes as
   * writeAscii of its string, and the bytes after it in its last word left as they were.
   */
  private clientIdWords(o: number, ids: Int32Array): void {
    const i32 = this.i32;
    const len = ids[0];
    i32[o + EV_CLIENT_ID_LENGTH_WORD] = len;
    const at = o + EV_CLIENT_ID_WORD;
    const full = len >> 2;
    for (let k = 0; k < full; k++) i32[at + k] = ids[1 + k];
    const tail = len & 3;
    if (tail !== 0) {
      const mask = (1 << (tail << 3)) - 1;
      i32[at + full] = (i32[at + full] & ~mask) | (ids[1 + full] & mask);
    }
  }

  /** Announces `account` (address at `bytes[offset..]`) if the current request is accepted. */
  announceOnAccept(account: number, bytes: Uint8Array, offset: number): void {
    this.new_bytes = bytes;
    this.new_ids.push(account);
    this.new_offsets.push(offset);
  }

  /** Forgets unannounced accounts; returns how many there were (the request was refused). */
  dropUnannounced(): number {
    const n = this.new_ids.length;
    this.new_ids.length = 0;
    this.new_offsets.length = 0;
    this.new_bytes = null;
    return n;
  }

  private announceNew(): void {
    const bytes = this.new_bytes as Uint8Array;
    for (let i = 0; i < this.new_ids.length; i++) this.account(this.new_ids[i], bytes, this.new_offsets[i]);
    this.dropUnannounced();
  }

  rejected(kind: number, account: number, code: number, reason: number): void {
    this.last_accepted = false;
    const o = this.claim(EventType.REJECTED);
    const f = this.f64;
    const b = this.fields(o);
    f[b + RejectedField.KIND] = kind;
    f[b + RejectedField.ACCOUNT] = account;
    f[b + RejectedField.CODE] = code;
    f[b + RejectedField.REASON] = reason;
  }

  fill(fill_id: number, market: number, taker_order_id: number, maker_order_id: number,
    taker_account: number, maker_account: number, taker_side: number, price_units: number,
    quantity_units: number, taker_fee_units: number, maker_fee_units: number): void {
    const o = this.claim(EventType.FILL);
    const f = this.f64;
    const b = this.fields(o);
    f[b + FillField.FILL_ID] = fill_id;
    f[b + FillField.MARKET] = market;
    f[b + FillField.TAKER_ORDER_ID] = taker_order_id;
    f[b + FillField.MAKER_ORDER_ID] = maker_order_id;
    f[b + FillField.TAKER_ACCOUNT] = taker_account;
    f[b + FillField.MAKER_ACCOUNT] = maker_account;
    f[b + FillField.TAKER_SIDE] = taker_side;
    f[b + FillField.PRICE_UNITS] = price_units;
    f[b + FillField.QUANTITY_UNITS] = quantity_units;
    f[b + FillField.TAKER_FEE_UNITS] = taker_fee_units;
    f[b + FillField.MAKER_FEE_UNITS] = maker_fee_units;
  }

  orderUpdate(order_id: number, account: number, market: number, side: number, status: number,
    price_units: number, quantity_units: number, filled_units: number, remaining_units: number,
    last_fill_price_units: number, reason: number, locked_units: number, priority_seq: number): void {
    const o = this.claim(EventType.ORDER_UPDATE);
    const f = this.f64;
    const b = this.fields(o);
    f[b + OrderUpdateField.ORDER_ID] = order_id;
    f[b + OrderUpdateField.ACCOUNT] = account;
    f[b + OrderUpdateField.MARKET] = market;
    f[b + OrderUpdateField.SIDE] = side;
    f[b + OrderUpdateField.STATUS] = status;
    f[b + OrderUpdateField.PRICE_UNITS] = price_units;
    f[b + OrderUpdateField.QUANTITY_UNITS] = quantity_units;
    f[b + OrderUpdateField.FILLED_UNITS] = filled_units;
    f[b + OrderUpdateField.REMAINING_UNITS] = remaining_units;
    f[b + OrderUpdateField.LAST_FILL_PRICE_UNITS] = last_fill_price_units;
    f[b + OrderUpdateField.REASON] = reason;
    f[b + OrderUpdateField.LOCKED_UNITS] = locked_units;
    f[b + OrderUpdateField.PRIORITY_SEQ] = priority_seq;
  }

  balance(account: number, asset: number, available_units: number, locked_units: number, reason: number): void {
    const o = this.claim(EventType.BALANCE);
    const f = this.f64;
    const b = this.fields(o);
    f[b + BalanceField.ACCOUNT] = account;
    f[b + BalanceField.ASSET] = asset;
    f[b + BalanceField.AVAILABLE_UNITS] = available_units;
    f[b + BalanceField.LOCKED_UNITS] = locked_units;
    f[b + BalanceField.REASON] = reason;
  }

  referral(referred: number, referrer: number, active_until_ms: number): void {
    const b = this.fields(this.claim(EventType.REFERRAL));
    const f = this.f64;
    f[b + ReferralField.REFERRED] = referred;
    f[b + ReferralField.REFERRER] = referrer;
    f[b + ReferralField.ACTIVE_UNTIL_MS] = active_until_ms;
  }

  referralShare(fill_id: number, referred: number, referrer: number, asset: number, amount_units: number): void {
    const b = this.fields(this.claim(EventType.REFERRAL_SHARE));
    const f = this.f64;
    f[b + ReferralShareField.FILL_ID] = fill_id;
    f[b + ReferralShareField.REFERRED] = referred;
    f[b + ReferralShareField.REFERRER] = referrer;
    f[b + ReferralShareField.ASSET] = asset;
    f[b + ReferralShareField.AMOUNT_UNITS] = amount_units;
  }

  inboxQueued(entry_id: number, account: number, kind: number, nonce: number, deadline_ms: number,
    referrer_account: number, reject: number): void {
    const b = this.fields(this.claim(EventType.INBOX_QUEUED));
    const f = this.f64;
    f[b + InboxQueuedField.ENTRY_ID] = entry_id;
    f[b + InboxQueuedField.ACCOUNT] = account;
    f[b + InboxQueuedField.KIND] = kind;
    f[b + InboxQueuedField.NONCE] = nonce;
    f[b + InboxQueuedField.DEADLINE_MS] = deadline_ms;
    f[b + InboxQueuedField.REFERRER_ACCOUNT] = referrer_account;
    f[b + InboxQueuedField.REJECT] = reject;
  }

  /** The included request becomes `current`: its accepted event carries its fields and client id. */
  inboxIncluded(entry_id: number, request: Request): void {
    this.current = request;
    const b = this.fields(this.claim(EventType.INBOX_INCLUDED));
    const f = this.f64;
    f[b + InboxIncludedField.ENTRY_ID] = entry_id;
    f[b + InboxIncludedField.ACCOUNT] = request.account;
    f[b + InboxIncludedField.KIND] = request.kind;
    f[b + InboxIncludedField.NONCE] = request.nonce;
  }

  agent(account: number, agent: number, valid_until_ms: number, nonce_high_water: number, nonce_floor: number, name: string): void {
    const o = this.claim(EventType.AGENT);
    const b = this.fields(o);
    const f = this.f64;
    f[b + AgentField.ACCOUNT] = account;
    f[b + AgentField.AGENT] = agent;
    f[b + AgentField.VALID_UNTIL_MS] = valid_until_ms;
    f[b + AgentField.NONCE_HIGH_WATER] = nonce_high_water;
    f[b + AgentField.NONCE_FLOOR] = nonce_floor;
    this.i32[o + EV_CLIENT_ID_LENGTH_WORD] = name.length;
    writeAscii(this.u8, (o + EV_CLIENT_ID_WORD) * 4, name);
  }

  account(account: number, address: Uint8Array, address_offset: number): void {
    const o = this.claim(EventType.ACCOUNT);
    this.f64[this.fields(o) + AccountField.ACCOUNT] = account;
    this.u8.set(address.subarray(address_offset, address_offset + ADDRESS_BYTES), (o + EV_ADDRESS_WORD) * 4);
  }

  /** BATCH_BEGIN (batch 0: the start-up announcements). */
  batchBegin(batch_id: number, time_ms: number): void {
    const b = this.fields(this.claim(EventType.BATCH_BEGIN));
    const f = this.f64;
    f[b + BatchField.BATCH_ID] = batch_id;
    f[b + BatchField.TIME_MS] = time_ms;
  }

  batchCommitted(batch_id: number, time_ms: number, request_count: number, started_ms = 0, applied_ms = 0, durable_ms = 0): void {
    const b = this.fields(this.claim(EventType.BATCH_COMMITTED));
    const f = this.f64;
    f[b + BatchField.BATCH_ID] = batch_id;
    f[b + BatchField.TIME_MS] = time_ms;
    f[b + BatchField.REQUEST_COUNT] = request_count;
    f[b + BatchField.STARTED_MS] = started_ms;
    f[b + BatchField.APPLIED_MS] = applied_ms;
    f[b + BatchField.DURABLE_MS] = durable_ms;
  }

  market(m: number, info: MarketInfo): void {
    const b = this.fields(this.claim(EventType.MARKET));
    const f = this.f64;
    f[b + MarketField.MARKET] = m;
    f[b + MarketField.STATUS] = info.status;
    f[b + MarketField.BASE_ASSET] = info.base_asset;
    f[b + MarketField.QUOTE_ASSET] = info.quote_asset;
    f[b + MarketField.TICK_UNITS] = info.tick_units;
    f[b + MarketField.LOT_UNITS] = info.lot_units;
    f[b + MarketField.FEE_OVERRIDE] = info.fee_override;
    f[b + MarketField.MAKER_FEE_BPS] = info.maker_fee_bps;
    f[b + MarketField.TAKER_FEE_BPS] = info.taker_fee_bps;
  }

  fees(maker_fee_bps: number, taker_fee_bps: number): void {
    const b = this.fields(this.claim(EventType.FEES));
    const f = this.f64;
    f[b + FeesField.MAKER_FEE_BPS] = maker_fee_bps;
    f[b + FeesField.TAKER_FEE_BPS] = taker_fee_bps;
  }

  credit(account: number, credit_limit_units: number, auto_cancel_ratio_ppm: number): void {
    const b = this.fields(this.claim(EventType.CREDIT));
    const f = this.f64;
    f[b + CreditField.ACCOUNT] = account;
    f[b + CreditField.CREDIT_LIMIT_UNITS] = credit_limit_units;
    f[b + CreditField.AUTO_CANCEL_RATIO_PPM] = auto_cancel_ratio_ppm;
  }
}
