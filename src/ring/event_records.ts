// The event record (matcher -> front): its layout and the named fields of each event type,
// asserted when this module loads, and the readers of the front. The writer the matcher uses
// (EventWriter, its EventSink) is event_writer.ts; records.ts has what events share with requests.
import { toHex0x } from '../util/hex.js';
import { ADDRESS_BYTES, CLIENT_ORDER_ID_BYTES_MAX, readAscii, RECORD_WORDS, type RecordViews } from './records.js';

// ---- Event record.
export const EV_SEQ_F64 = 0; // the request sequence this event answers (0 for batch markers)
export const EV_TYPE_WORD = 2;
/** Field k of an event (the per-type `...Field` indices below) is at f64 index (offset >> 1) + 2 + k. */
export const EV_FIELD0_F64 = 2;
/** Event fields per record at most (f64 indices 2..14 = words 4..29). */
export const EVENT_FIELDS_MAX = 13;
/** Accepted events carry the client order id (words 31..39) and its length (word 30). */
export const EV_CLIENT_ID_LENGTH_WORD = 30;
export const EV_CLIENT_ID_WORD = 31;
/** Account events carry the address in words 31..35. */
export const EV_ADDRESS_WORD = 31;

export const EventType = {
  ACCEPTED: 1,
  REJECTED: 2,
  FILL: 3,
  ORDER_UPDATE: 4,
  BALANCE: 5,
  /** A new account id for an address (the matcher's registry). */
  ACCOUNT: 6,
  BATCH_BEGIN: 7,
  /** The batch is durable: its answers may go out. */
  BATCH_COMMITTED: 8,
  /** A market's parameters (startup and after admin requests). */
  MARKET: 9,
  /** Global fees (startup and after SET_FEES). */
  FEES: 10,
  /** A credit setting (after SET_CREDIT). */
  CREDIT: 11,
  /** [referred, referrer, active_until_ms] after an accepted REFER. */
  REFERRAL: 12,
  /** [fill_id, referred, referrer, asset, amount_units]: a referrer's share of a taker fee. */
  REFERRAL_SHARE: 13,
  /**
   * [entry_id, account, kind, nonce, deadline_ms, referrer_account, reject]: a new forced-inclusion
   * entry (the payload's kind, nonce, resolved referrer and the front's verdict; its other fields
   * are in the FORCE_INCLUDE's ACCEPTED event just before).
   */
  INBOX_QUEUED: 14,
  /** [entry_id, account, kind, nonce]: an entry leaves the inbox; its request's events follow. */
  INBOX_INCLUDED: 15,
  /**
   * [account, agent, valid_until_ms, nonce_high_water, nonce_floor], the agent's name in the client
   * id bytes: an agent entry changed (EventSink.agent; valid_until_ms 0 = the entry is gone).
   */
  AGENT: 16,
} as const;

// ---- Event fields by type: the index k of `EventFields.field(k)` / `EventReader.field(o, k)`.
// The writer (EventWriter, event_writer.ts) and every reader use these names; nobody outside
// src/ring/ reads an event field by number.

/** BATCH_BEGIN and BATCH_COMMITTED (EVENT_COUNT: committed only, the batch's request count). */
export const BatchField = {
  BATCH_ID: 0, TIME_MS: 1, REQUEST_COUNT: 2,
  /** BATCH_COMMITTED, stage timings only (else 0): the batch's start, applied and durable times, epoch ms. */
  STARTED_MS: 3, APPLIED_MS: 4, DURABLE_MS: 5,
} as const;
/**
 * ACCEPTED: the request's kind, account and new order id (a FORCE_INCLUDE's: its inbox entry id),
 * then the request's own fields (a FORCE_INCLUDE's: its payload's; NONCE stays the envelope's).
 */
export const AcceptedField = {
  KIND: 0, ACCOUNT: 1, ORDER_ID: 2, NONCE: 3, MARKET: 4, SIDE: 5, ORDER_TYPE: 6, TIF: 7,
  PRICE_UNITS: 8, QUANTITY_UNITS: 9, ASSET: 10, AMOUNT_UNITS: 11,
  /** The request's order_id field (the order a CANCEL/AMEND targets; a payload's). */
  REQUEST_ORDER_ID: 12,
} as const;
/** REJECTED: kind, account, the error code and the Reject reason. */
export const RejectedField = { KIND: 0, ACCOUNT: 1, CODE: 2, REASON: 3 } as const;
export const FillField = {
  FILL_ID: 0, MARKET: 1, TAKER_ORDER_ID: 2, MAKER_ORDER_ID: 3, TAKER_ACCOUNT: 4, MAKER_ACCOUNT: 5,
  TAKER_SIDE: 6, PRICE_UNITS: 7, QUANTITY_UNITS: 8, TAKER_FEE_UNITS: 9, MAKER_FEE_UNITS: 10,
} as const;
export const OrderUpdateField = {
  ORDER_ID: 0, ACCOUNT: 1, MARKET: 2, SIDE: 3, STATUS: 4, PRICE_UNITS: 5, QUANTITY_UNITS: 6,
  FILLED_UNITS: 7, REMAINING_UNITS: 8,
  /** The order's latest fill price (0 before its first fill), whether or not this update filled. */
  LAST_FILL_PRICE_UNITS: 9,
  REASON: 10,
  /** What the order holds locked after the update (quote for bids, base for asks); 0 once closed. */
  LOCKED_UNITS: 11,
  /** Its time priority while it rests (stamped each time it enters a book); 0 once closed. */
  PRIORITY_SEQ: 12,
} as const;
export const BalanceField = { ACCOUNT: 0, ASSET: 1, AVAILABLE_UNITS: 2, LOCKED_UNITS: 3, REASON: 4 } as const;
/** ACCOUNT: the id; the address is in the record's address bytes (addressHex). */
export const AccountField = { ACCOUNT: 0 } as const;
/** MARKET: STATUS 0 active, 1 paused; FEE_OVERRIDE 0/1; the bps are the market's effective fees. */
export const MarketField = {
  MARKET: 0, STATUS: 1, BASE_ASSET: 2, QUOTE_ASSET: 3, TICK_UNITS: 4, LOT_UNITS: 5, FEE_OVERRIDE: 6,
  MAKER_FEE_BPS: 7, TAKER_FEE_BPS: 8,
} as const;
export const FeesField = { MAKER_FEE_BPS: 0, TAKER_FEE_BPS: 1 } as const;
/** CREDIT: a CREDIT_LIMIT_UNITS of 0 removes the account's credit. */
export const CreditField = { ACCOUNT: 0, CREDIT_LIMIT_UNITS: 1, AUTO_CANCEL_RATIO_PPM: 2 } as const;
export const ReferralField = { REFERRED: 0, REFERRER: 1, ACTIVE_UNTIL_MS: 2 } as const;
export const ReferralShareField = { FILL_ID: 0, REFERRED: 1, REFERRER: 2, ASSET: 3, AMOUNT_UNITS: 4 } as const;
export const InboxQueuedField = {
  ENTRY_ID: 0, ACCOUNT: 1, KIND: 2, NONCE: 3, DEADLINE_MS: 4, REFERRER_ACCOUNT: 5, REJECT: 6,
} as const;
export const InboxIncludedField = { ENTRY_ID: 0, ACCOUNT: 1, KIND: 2, NONCE: 3 } as const;
export const AgentField = { ACCOUNT: 0, AGENT: 1, VALID_UNTIL_MS: 2, NONCE_HIGH_WATER: 3, NONCE_FLOOR: 4 } as const;

/**
 * Reads one event record's fields (over the ring: EventCursor; over a packed copy: the DA
 * worker's PackedFields; over arrays in tests). `k` is one of the `...Field` indices above.
 */
export interface EventFields {
  type(): number;
  field(k: number): number;
  clientOrderId(): string;
  addressHex(): string;
}

// Layout assertions (TIGER_STYLE: at load, not in the hot path).
if ((EV_FIELD0_F64 + EVENT_FIELDS_MAX) * 2 > EV_CLIENT_ID_LENGTH_WORD) throw new Error('event record: fields overlap the client id');
if (EV_CLIENT_ID_WORD + CLIENT_ORDER_ID_BYTES_MAX / 4 > RECORD_WORDS) throw new Error('event record too small');
for (const named of [BatchField, AcceptedField, RejectedField, FillField, OrderUpdateField, BalanceField, AccountField,
  MarketField, FeesField, CreditField, ReferralField, ReferralShareField, InboxQueuedField, InboxIncludedField, AgentField]) {
  for (const k of Object.values(named)) if (k >= EVENT_FIELDS_MAX) throw new Error(`event field ${k} beyond the record's ${EVENT_FIELDS_MAX}`);
}

/** Reads event records at a word offset `o` of some RecordViews (ring slots or a copy). */
export class EventReader {
  private declare v: RecordViews;

  constructor(views: RecordViews) {
    this.v = views;
  }

  /** Points the reader at other memory (e.g. the next batch buffer). */
  setViews(views: RecordViews): void {
    this.v = views;
  }

  seq(o: number): number {
    return this.v.f64[(o >> 1) + EV_SEQ_F64];
  }

  type(o: number): number {
    return this.v.i32[o + EV_TYPE_WORD];
  }

  field(o: number, k: number): number {
    return this.v.f64[(o >> 1) + EV_FIELD0_F64 + k];
  }

  clientOrderId(o: number): string {
    const len = this.v.i32[o + EV_CLIENT_ID_LENGTH_WORD];
    return len > 0 && len <= CLIENT_ORDER_ID_BYTES_MAX ? readAscii(this.v.u8, (o + EV_CLIENT_ID_WORD) * 4, len) : '';
  }

  addressHex(o: number): string {
    const start = (o + EV_ADDRESS_WORD) * 4;
    return toHex0x(this.v.u8, start, start + ADDRESS_BYTES);
  }
}

/** One event record of a RecordViews as EventFields: set `o` (the record's word offset), then read. */
export class EventCursor implements EventFields {
  o = 0;
  private declare readonly reader: EventReader;
  constructor(reader: EventReader) {
    this.reader = reader;
  }
  type(): number { return this.reader.type(this.o); }
  seq(): number { return this.reader.seq(this.o); }
  field(k: number): number { return this.reader.field(this.o, k); }
  clientOrderId(): string { return this.reader.clientOrderId(this.o); }
  addressHex(): string { return this.reader.addressHex(this.o); }
}
