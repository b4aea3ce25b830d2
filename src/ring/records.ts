// The fixed record layouts that cross the rings: requests (front -> matcher) and events
// (matcher -> front). One module, used by both sides, so the layout cannot drift; the layout is
// asserted when this module loads.
//
// A record is `RECORD_WORDS` 32-bit words. Numbers that can reach 2^53 (prices, quantities,
// balances, ids, nonces) sit in float64 words (exact for integers up to 2^53); small enums in
// int32 words; addresses and client order ids as raw bytes.
import { RequestKind, type EventSink, type MarketInfo, type Request } from '../engine/types.js';
import { AGENT_NAME_BYTES_MAX } from '../engine/agents.js';
import { toHex0x } from '../util/hex.js';
import { SpscRing } from './spsc_ring.js';
import { CONSENT_KIND, CONSENT_KIND_WORD, consentSlotCount, writeConsentSlots } from './consent.js';

export const RECORD_WORDS = 52;

// Offsets carry their index space in their name: `_F64` offsets index the Float64Array from the
// slot's f64 base (word offset >> 1), `_WORD` offsets index the Int32Array from the slot's word
// offset. (Without it, the float64 index 23 and the word index 23 read alike and are 23 words
// apart.)

// ---- Request record: float64 fields.
const RQ_SEQ_F64 = 0;
const RQ_NONCE_F64 = 1;
const RQ_PRICE_F64 = 2;
const RQ_QUANTITY_F64 = 3;
const RQ_ORDER_ID_F64 = 4;
const RQ_AMOUNT_F64 = 5;
const RQ_CREDIT_LIMIT_F64 = 6;
const RQ_TICK_F64 = 7;
const RQ_LOT_F64 = 8;
/**
 * Who signed, when not the user: the agent's 20 address bytes in words 12..16 (all zero = the
 * user signed). They overlay the credit limit, tick and lot (float64 indices 6..8 = words 12..17),
 * which only the admin kinds (SET_CREDIT, ADD_MARKET) carry, and an agent can never sign an admin
 * request: so the record stays at 52 words (asserted below; ADMIN_KINDS_WITH_WIDE_FIELDS).
 */
export const RQ_SIGNER_WORD = 12;
/** The admin kinds that use float64 indices 6..8 (and so carry no signer). */
function usesWideAdminFields(kind: number): boolean {
  return kind === RequestKind.SET_CREDIT || kind === RequestKind.ADD_MARKET;
}
/**
 * APPROVE_AGENT: the agent's name (at most AGENT_NAME_BYTES_MAX = 16 ASCII bytes, its length in the
 * client-id length word) in words 40..43, after the agent's address in the second-address words.
 */
const RQ_AGENT_NAME_WORD = 40;
/** FORCE_INCLUDE: the payload's nonce (float64 index 23 = words 46..47). */
const RQ_INNER_NONCE_F64 = 23;
// int32 fields.
const RQ_KIND_WORD = 18;
const RQ_ACCOUNT_HINT_WORD = 19;
const RQ_MARKET_WORD = 20;
const RQ_SIDE_WORD = 21;
const RQ_ORDER_TYPE_WORD = 22;
const RQ_TIF_WORD = 23;
const RQ_ASSET_WORD = 24;
const RQ_ASSET_QUOTE_WORD = 25;
const RQ_MAKER_BPS_WORD = 26;
const RQ_TAKER_BPS_WORD = 27;
const RQ_RATIO_PPM_WORD = 28;
const RQ_CLIENT_ID_LENGTH_WORD = 29;
/** 20 address bytes in words 30..34. */
export const RQ_ADDRESS_WORD = 30;
/** Client order id bytes (ASCII, at most 36) in words 35..43. */
const RQ_CLIENT_ID_WORD = 35;
export const CLIENT_ORDER_ID_BYTES_MAX = 36;
export const ADDRESS_BYTES = 20;
/**
 * REFER (and a FORCE_INCLUDE carrying one): the referrer's 20 address bytes. They share the
 * client-id bytes, which a referral never carries.
 */
const RQ_SECOND_ADDRESS_WORD = RQ_CLIENT_ID_WORD;
/** FORCE_INCLUDE: the payload's kind and the front's verdict on it (a Reject reason). */
const RQ_INNER_KIND_WORD = 44;
const RQ_INNER_REJECT_WORD = 45;
/** PLACE: the stale-order guard, epoch ms (float64 index 24 = words 48..49; 0 = none). */
const RQ_EXPIRES_AFTER_F64 = 24;
/** PLACE: the self-trade prevention mode (Stp). */
const RQ_STP_WORD = 50;
/**
 * How many records after this one belong to the same group (POST /orders/batch): the matcher
 * never ends a batch inside a group, so a group is applied contiguously in one batch.
 */
const RQ_GROUP_FOLLOWING_WORD = 51;
/** Most records in one group: POST /orders/batch's item limit (config) may not exceed it. */
export const REQUEST_GROUP_MAX = 64;

/** The seq of the request record at word offset `o` (the front's number, carried back by its events). */
export function requestSeqAt(views: RecordViews, o: number): number {
  return views.f64[(o >> 1) + RQ_SEQ_F64];
}

/** Records after the request record at word offset `o` of `i32` that belong to its group. */
export function groupFollowingAt(i32: Int32Array, o: number): number {
  return i32[o + RQ_GROUP_FOLLOWING_WORD];
}

// ---- Event record.
const EV_SEQ_F64 = 0; // the request sequence this event answers (0 for batch markers)
const EV_TYPE_WORD = 2;
/** Field k of an event (the per-type `...Field` indices below) is at f64 index (offset >> 1) + 2 + k. */
const EV_FIELD0_F64 = 2;
/** Event fields per record at most (f64 indices 2..14 = words 4..29). */
export const EVENT_FIELDS_MAX = 13;
/** Accepted events carry the client order id (words 31..39) and its length (word 30). */
const EV_CLIENT_ID_LENGTH_WORD = 30;
const EV_CLIENT_ID_WORD = 31;
/** Account events carry the address in words 31..35. */
const EV_ADDRESS_WORD = 31;

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
// The writer (EventWriter below) and every reader use these names; nobody outside this module
// reads an event field by number.

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
if (RQ_LOT_F64 * 2 + 2 > RQ_KIND_WORD) throw new Error('request record: float64 fields overlap int32 fields');
if (CONSENT_KIND_WORD !== RQ_KIND_WORD) throw new Error('consent slots mark themselves in the request kind word');
if (RQ_CLIENT_ID_WORD + CLIENT_ORDER_ID_BYTES_MAX / 4 > RECORD_WORDS) throw new Error('request record too small');
if (RQ_ADDRESS_WORD + ADDRESS_BYTES / 4 > RQ_CLIENT_ID_WORD) throw new Error('request address overlaps client id');
if (RQ_CLIENT_ID_WORD + CLIENT_ORDER_ID_BYTES_MAX / 4 > RQ_INNER_KIND_WORD || RQ_INNER_REJECT_WORD >= RQ_INNER_NONCE_F64 * 2 ||
  RQ_INNER_NONCE_F64 * 2 + 2 > RECORD_WORDS) throw new Error('request record: forced-inclusion fields overlap');
if ((EV_FIELD0_F64 + EVENT_FIELDS_MAX) * 2 > EV_CLIENT_ID_LENGTH_WORD) throw new Error('event record: fields overlap the client id');
if (EV_CLIENT_ID_WORD + CLIENT_ORDER_ID_BYTES_MAX / 4 > RECORD_WORDS) throw new Error('event record too small');
if (RECORD_WORDS % 2 !== 0) throw new Error('records must be 8-byte aligned');
if (RQ_SIGNER_WORD !== RQ_CREDIT_LIMIT_F64 * 2 || RQ_SIGNER_WORD + ADDRESS_BYTES / 4 > (RQ_LOT_F64 + 1) * 2) {
  throw new Error('request record: the signer must lie within the admin-only float64 fields 6..8');
}
if (RQ_AGENT_NAME_WORD !== RQ_SECOND_ADDRESS_WORD + ADDRESS_BYTES / 4 || RQ_AGENT_NAME_WORD + AGENT_NAME_BYTES_MAX / 4 > RQ_INNER_KIND_WORD) {
  throw new Error('request record: the agent name must follow the agent address, before the forced-inclusion fields');
}
if (RQ_EXPIRES_AFTER_F64 !== RQ_INNER_NONCE_F64 + 1 || RQ_STP_WORD !== RQ_EXPIRES_AFTER_F64 * 2 + 2 ||
  RQ_GROUP_FOLLOWING_WORD !== RQ_STP_WORD + 1 || RQ_GROUP_FOLLOWING_WORD + 1 > RECORD_WORDS) {
  throw new Error('request record: market-maker fields misplaced');
}
for (const named of [BatchField, AcceptedField, RejectedField, FillField, OrderUpdateField, BalanceField, AccountField,
  MarketField, FeesField, CreditField, ReferralField, ReferralShareField, InboxQueuedField, InboxIncludedField, AgentField]) {
  for (const k of Object.values(named)) if (k >= EVENT_FIELDS_MAX) throw new Error(`event field ${k} beyond the record's ${EVENT_FIELDS_MAX}`);
}

export function createRecordRing(capacity_slots: number): SpscRing {
  return SpscRing.create({ capacity_slots, slot_words: RECORD_WORDS });
}

export function attachRecordRing(sab: SharedArrayBuffer): SpscRing {
  const ring = SpscRing.attach(sab);
  if (ring.slot_words !== RECORD_WORDS) throw new Error(`ring has ${ring.slot_words}-word slots, records need ${RECORD_WORDS}`);
  return ring;
}

/** Typed views of memory holding records: a ring's slots or a copied batch buffer. */
export interface RecordViews {
  i32: Int32Array;
  f64: Float64Array;
  u8: Uint8Array;
}

/** Byte view helper shared by both codecs. */
function bytesOf(ring: SpscRing): Uint8Array {
  return new Uint8Array(ring.sab);
}

function writeAscii(u8: Uint8Array, byte_offset: number, text: string): void {
  for (let i = 0; i < text.length; i++) u8[byte_offset + i] = text.charCodeAt(i);
}

function readAscii(u8: Uint8Array, byte_offset: number, length: number): string {
  if (length === 0) return '';
  let s = '';
  for (let i = 0; i < length; i++) s += String.fromCharCode(u8[byte_offset + i]);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Requests

/** What the front writes for one request. `address` is 20 raw bytes. */
export interface RequestRecordInput {
  seq: number;
  address: Uint8Array;
  account_hint: number;
  request: Request;
}

export class RequestWriter {
  private readonly ring: SpscRing;
  private readonly u8: Uint8Array;
  private unpublished = 0;

  constructor(ring: SpscRing) {
    this.ring = ring;
    this.u8 = bytesOf(ring);
  }

  /**
   * Writes one record (published by the next flush); false when the ring is full (backpressure).
   * `referrer` is the referrer's address of a REFER (or a FORCE_INCLUDE carrying one), else null.
   * `consent` (src/ring/consent.ts) follows the record in its own slots, published together.
   */
  tryWrite(
    seq: number, address: Uint8Array, account_hint: number, r: Request, referrer: Uint8Array | null = null,
    consent: Uint8Array | null = null, group_following = 0, signer: Uint8Array | null = null,
  ): boolean {
    const extra = consent === null ? 0 : consentSlotCount(consent.length);
    if (extra > 0 && this.ring.freeSlots() < 1 + extra) return false;
    const o = this.ring.tryClaim();
    if (o < 0) return false;
    const f = this.ring.f64;
    const i = this.ring.i32;
    const fb = o >> 1;
    f[fb + RQ_SEQ_F64] = seq;
    f[fb + RQ_NONCE_F64] = r.nonce;
    f[fb + RQ_PRICE_F64] = r.price_units;
    f[fb + RQ_QUANTITY_F64] = r.quantity_units;
    f[fb + RQ_ORDER_ID_F64] = r.order_id;
    f[fb + RQ_AMOUNT_F64] = r.amount_units;
    f[fb + RQ_CREDIT_LIMIT_F64] = r.credit_limit_units;
    f[fb + RQ_TICK_F64] = r.tick_size_units;
    f[fb + RQ_LOT_F64] = r.lot_size_units;
    i[o + RQ_KIND_WORD] = r.kind;
    i[o + RQ_ACCOUNT_HINT_WORD] = account_hint;
    i[o + RQ_MARKET_WORD] = r.market;
    i[o + RQ_SIDE_WORD] = r.side;
    i[o + RQ_ORDER_TYPE_WORD] = r.order_type;
    i[o + RQ_TIF_WORD] = r.tif;
    i[o + RQ_ASSET_WORD] = r.asset;
    i[o + RQ_ASSET_QUOTE_WORD] = r.asset_quote;
    i[o + RQ_MAKER_BPS_WORD] = r.maker_fee_bps;
    i[o + RQ_TAKER_BPS_WORD] = r.taker_fee_bps;
    i[o + RQ_RATIO_PPM_WORD] = r.auto_cancel_ratio_ppm;
    const coid = r.client_order_id;
    if (coid.length > CLIENT_ORDER_ID_BYTES_MAX) throw new Error('client_order_id longer than the record allows');
    i[o + RQ_CLIENT_ID_LENGTH_WORD] = coid.length;
    const named = r.kind === RequestKind.APPROVE_AGENT;
    if (named && coid.length > AGENT_NAME_BYTES_MAX) throw new Error('an agent name longer than the record allows');
    writeAscii(this.u8, (o + (named ? RQ_AGENT_NAME_WORD : RQ_CLIENT_ID_WORD)) * 4, coid);
    if (address.length !== ADDRESS_BYTES) throw new Error('address must be 20 bytes');
    this.u8.set(address, (o + RQ_ADDRESS_WORD) * 4);
    if (referrer !== null) {
      if (referrer.length !== ADDRESS_BYTES || (coid.length > 0 && !named)) throw new Error('a second address is 20 bytes and excludes a client id');
      this.u8.set(referrer, (o + RQ_SECOND_ADDRESS_WORD) * 4);
    }
    if (signer !== null) {
      if (signer.length !== ADDRESS_BYTES || usesWideAdminFields(r.kind)) throw new Error('a signer is 20 bytes, on a non-admin request');
      this.u8.set(signer, (o + RQ_SIGNER_WORD) * 4);
    }
    i[o + RQ_INNER_KIND_WORD] = r.inner_kind;
    i[o + RQ_INNER_REJECT_WORD] = r.inner_reject;
    f[fb + RQ_INNER_NONCE_F64] = r.inner_nonce;
    f[fb + RQ_EXPIRES_AFTER_F64] = r.expires_after_ms;
    i[o + RQ_STP_WORD] = r.stp;
    if (!(group_following >= 0 && group_following < REQUEST_GROUP_MAX)) throw new Error('request group too large');
    i[o + RQ_GROUP_FOLLOWING_WORD] = group_following;
    this.unpublished++;
    if (consent !== null) {
      const slots: number[] = [];
      for (let j = 0; j < extra; j++) slots.push(this.ring.tryClaim() * 4);
      writeConsentSlots(this.u8, i, (j) => slots[j], consent);
      this.unpublished += extra;
    }
    return true;
  }

  /** Slots free now: a group is written only when all of it fits (never half a batch). */
  freeSlots(): number {
    return this.ring.freeSlots();
  }

  /**
   * Publishes every record written since the last flush with one store (and at most one wake-up
   * of the matcher). The front calls it once per event-loop turn: a wake-up per request cost a
   * seventh of the front thread under load.
   */
  flush(): void {
    if (this.unpublished > 0) {
      this.ring.publishBatch(this.unpublished);
      this.unpublished = 0;
    }
  }
}

/** Decodes request records (from a ring's slots or a copy of them) into a reused Request. */
export class RequestReader {
  private v: RecordViews;

  constructor(views: RecordViews) {
    this.v = views;
  }

  setViews(views: RecordViews): void {
    this.v = views;
  }

  get u8(): Uint8Array {
    return this.v.u8;
  }

  /** Whether the record at word offset `o` is a consent slot (the matcher skips it). */
  isConsent(o: number): boolean {
    return this.v.i32[o + RQ_KIND_WORD] === CONSENT_KIND;
  }

  /** Fills `r` from the record at word offset `o`; returns the record's seq. */
  read(o: number, r: Request): number {
    const f = this.v.f64;
    const i = this.v.i32;
    const fb = o >> 1;
    r.nonce = f[fb + RQ_NONCE_F64];
    r.price_units = f[fb + RQ_PRICE_F64];
    r.quantity_units = f[fb + RQ_QUANTITY_F64];
    r.order_id = f[fb + RQ_ORDER_ID_F64];
    r.amount_units = f[fb + RQ_AMOUNT_F64];
    r.kind = i[o + RQ_KIND_WORD];
    // Words 12..17: the admin kinds' wide fields, else the signer (resolved by the matcher: signerByteOffset).
    const wide = usesWideAdminFields(r.kind);
    r.credit_limit_units = wide ? f[fb + RQ_CREDIT_LIMIT_F64] : 0;
    r.tick_size_units = wide ? f[fb + RQ_TICK_F64] : 0;
    r.lot_size_units = wide ? f[fb + RQ_LOT_F64] : 0;
    r.signer = 0;
    r.agent_account = 0;
    r.market = i[o + RQ_MARKET_WORD];
    r.side = i[o + RQ_SIDE_WORD];
    r.order_type = i[o + RQ_ORDER_TYPE_WORD];
    r.tif = i[o + RQ_TIF_WORD];
    r.asset = i[o + RQ_ASSET_WORD];
    r.asset_quote = i[o + RQ_ASSET_QUOTE_WORD];
    r.maker_fee_bps = i[o + RQ_MAKER_BPS_WORD];
    r.taker_fee_bps = i[o + RQ_TAKER_BPS_WORD];
    r.auto_cancel_ratio_ppm = i[o + RQ_RATIO_PPM_WORD];
    const len = i[o + RQ_CLIENT_ID_LENGTH_WORD];
    r.client_order_id = r.kind === RequestKind.APPROVE_AGENT
      ? (len > 0 && len <= AGENT_NAME_BYTES_MAX ? readAscii(this.v.u8, (o + RQ_AGENT_NAME_WORD) * 4, len) : '')
      : (len > 0 && len <= CLIENT_ORDER_ID_BYTES_MAX ? readAscii(this.v.u8, (o + RQ_CLIENT_ID_WORD) * 4, len) : '');
    r.inner_kind = i[o + RQ_INNER_KIND_WORD];
    r.inner_reject = i[o + RQ_INNER_REJECT_WORD];
    r.inner_nonce = f[fb + RQ_INNER_NONCE_F64];
    r.expires_after_ms = f[fb + RQ_EXPIRES_AFTER_F64];
    r.stp = i[o + RQ_STP_WORD];
    // Resolved by the matcher from the referrer address (referrerByteOffset).
    r.referrer_account = 0;
    return f[fb + RQ_SEQ_F64];
  }

  /**
   * Byte offset of the record's signer address in `u8`, or -1 when the user signed (all zero) or
   * the kind is an admin kind (whose words these are).
   */
  signerByteOffset(o: number): number {
    const i = this.v.i32;
    if (usesWideAdminFields(i[o + RQ_KIND_WORD])) return -1;
    const w = o + RQ_SIGNER_WORD;
    return (i[w] | i[w + 1] | i[w + 2] | i[w + 3] | i[w + 4]) === 0 ? -1 : w * 4;
  }

  /** Byte offset of a REFER's referrer address in `u8`. */
  referrerByteOffset(o: number): number {
    return (o + RQ_SECOND_ADDRESS_WORD) * 4;
  }

  accountHint(o: number): number {
    return this.v.i32[o + RQ_ACCOUNT_HINT_WORD];
  }

  /** Byte offset of the record's 20 address bytes in `u8`. */
  addressByteOffset(o: number): number {
    return (o + RQ_ADDRESS_WORD) * 4;
  }
}

/** Typed views over a plain Int32Array of records (a batch copy, a journal batch). */
export function viewsOfRecords(records: Int32Array): RecordViews {
  return {
    i32: records,
    f64: new Float64Array(records.buffer, records.byteOffset, records.length >> 1),
    u8: new Uint8Array(records.buffer, records.byteOffset, records.length * 4),
  };
}

// ---------------------------------------------------------------------------------------------
// Events

/**
 * The matcher's EventSink: writes each event as a record tagged with the current request's seq.
 * A full ring makes the matcher wait (backpressure reaches the front through the request ring).
 */
export class EventWriter implements EventSink {
  private readonly ring: SpscRing;
  private readonly u8: Uint8Array;
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
    this.ring.f64[(o >> 1) + EV_SEQ_F64] = this.seq;
    this.ring.i32[o + EV_TYPE_WORD] = type;
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
    const f = this.ring.f64;
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
      const coid = r.client_order_id;
      this.ring.i32[o + EV_CLIENT_ID_LENGTH_WORD] = coid.length;
      writeAscii(this.u8, (o + EV_CLIENT_ID_WORD) * 4, coid);
    } else {
      this.ring.i32[o + EV_CLIENT_ID_LENGTH_WORD] = 0;
    }
    if (this.new_ids.length > 0) this.announceNew();
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
    const f = this.ring.f64;
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
    const f = this.ring.f64;
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
    const f = this.ring.f64;
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
    const f = this.ring.f64;
    const b = this.fields(o);
    f[b + BalanceField.ACCOUNT] = account;
    f[b + BalanceField.ASSET] = asset;
    f[b + BalanceField.AVAILABLE_UNITS] = available_units;
    f[b + BalanceField.LOCKED_UNITS] = locked_units;
    f[b + BalanceField.REASON] = reason;
  }

  referral(referred: number, referrer: number, active_until_ms: number): void {
    const b = this.fields(this.claim(EventType.REFERRAL));
    const f = this.ring.f64;
    f[b + ReferralField.REFERRED] = referred;
    f[b + ReferralField.REFERRER] = referrer;
    f[b + ReferralField.ACTIVE_UNTIL_MS] = active_until_ms;
  }

  referralShare(fill_id: number, referred: number, referrer: number, asset: number, amount_units: number): void {
    const b = this.fields(this.claim(EventType.REFERRAL_SHARE));
    const f = this.ring.f64;
    f[b + ReferralShareField.FILL_ID] = fill_id;
    f[b + ReferralShareField.REFERRED] = referred;
    f[b + ReferralShareField.REFERRER] = referrer;
    f[b + ReferralShareField.ASSET] = asset;
    f[b + ReferralShareField.AMOUNT_UNITS] = amount_units;
  }

  inboxQueued(entry_id: number, account: number, kind: number, nonce: number, deadline_ms: number,
    referrer_account: number, reject: number): void {
    const b = this.fields(this.claim(EventType.INBOX_QUEUED));
    const f = this.ring.f64;
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
    const f = this.ring.f64;
    f[b + InboxIncludedField.ENTRY_ID] = entry_id;
    f[b + InboxIncludedField.ACCOUNT] = request.account;
    f[b + InboxIncludedField.KIND] = request.kind;
    f[b + InboxIncludedField.NONCE] = request.nonce;
  }

  agent(account: number, agent: number, valid_until_ms: number, nonce_high_water: number, nonce_floor: number, name: string): void {
    const o = this.claim(EventType.AGENT);
    const b = this.fields(o);
    const f = this.ring.f64;
    f[b + AgentField.ACCOUNT] = account;
    f[b + AgentField.AGENT] = agent;
    f[b + AgentField.VALID_UNTIL_MS] = valid_until_ms;
    f[b + AgentField.NONCE_HIGH_WATER] = nonce_high_water;
    f[b + AgentField.NONCE_FLOOR] = nonce_floor;
    this.ring.i32[o + EV_CLIENT_ID_LENGTH_WORD] = name.length;
    writeAscii(this.u8, (o + EV_CLIENT_ID_WORD) * 4, name);
  }

  account(account: number, address: Uint8Array, address_offset: number): void {
    const o = this.claim(EventType.ACCOUNT);
    this.ring.f64[this.fields(o) + AccountField.ACCOUNT] = account;
    this.u8.set(address.subarray(address_offset, address_offset + ADDRESS_BYTES), (o + EV_ADDRESS_WORD) * 4);
  }

  /** BATCH_BEGIN (batch 0: the start-up announcements). */
  batchBegin(batch_id: number, time_ms: number): void {
    const b = this.fields(this.claim(EventType.BATCH_BEGIN));
    const f = this.ring.f64;
    f[b + BatchField.BATCH_ID] = batch_id;
    f[b + BatchField.TIME_MS] = time_ms;
  }

  batchCommitted(batch_id: number, time_ms: number, request_count: number, started_ms = 0, applied_ms = 0, durable_ms = 0): void {
    const b = this.fields(this.claim(EventType.BATCH_COMMITTED));
    const f = this.ring.f64;
    f[b + BatchField.BATCH_ID] = batch_id;
    f[b + BatchField.TIME_MS] = time_ms;
    f[b + BatchField.REQUEST_COUNT] = request_count;
    f[b + BatchField.STARTED_MS] = started_ms;
    f[b + BatchField.APPLIED_MS] = applied_ms;
    f[b + BatchField.DURABLE_MS] = durable_ms;
  }

  market(m: number, info: MarketInfo): void {
    const b = this.fields(this.claim(EventType.MARKET));
    const f = this.ring.f64;
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
    const f = this.ring.f64;
    f[b + FeesField.MAKER_FEE_BPS] = maker_fee_bps;
    f[b + FeesField.TAKER_FEE_BPS] = taker_fee_bps;
  }

  credit(account: number, credit_limit_units: number, auto_cancel_ratio_ppm: number): void {
    const b = this.fields(this.claim(EventType.CREDIT));
    const f = this.ring.f64;
    f[b + CreditField.ACCOUNT] = account;
    f[b + CreditField.CREDIT_LIMIT_UNITS] = credit_limit_units;
    f[b + CreditField.AUTO_CANCEL_RATIO_PPM] = auto_cancel_ratio_ppm;
  }
}

export function viewsOfRing(ring: SpscRing): RecordViews {
  return { i32: ring.i32, f64: ring.f64, u8: bytesOf(ring) };
}

/** Reads event records at a word offset `o` of some RecordViews (ring slots or a copy). */
export class EventReader {
  private v: RecordViews;

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
  constructor(private readonly reader: EventReader) {}
  type(): number { return this.reader.type(this.o); }
  seq(): number { return this.reader.seq(this.o); }
  field(k: number): number { return this.reader.field(this.o, k); }
  clientOrderId(): string { return this.reader.clientOrderId(this.o); }
  addressHex(): string { return this.reader.addressHex(this.o); }
}

/**
 * A growable copy of event records (the front keeps a batch's events here until the batch's
 * commit marker arrives).
 */
export class RecordBuffer {
  views: RecordViews;
  count = 0;

  constructor(records_initial: number) {
    this.views = RecordBuffer.alloc(Math.max(1, records_initial));
  }

  private static alloc(records: number): RecordViews {
    const ab = new ArrayBuffer(records * RECORD_WORDS * 4);
    return { i32: new Int32Array(ab), f64: new Float64Array(ab), u8: new Uint8Array(ab) };
  }

  /** Copies one record from `from` at word offset `o`; returns the copy's word offset. */
  push(from: RecordViews, o: number): number {
    const capacity = this.views.i32.length / RECORD_WORDS;
    if (this.count === capacity) {
      const grown = RecordBuffer.alloc(capacity * 2);
      grown.i32.set(this.views.i32);
      this.views = grown;
    }
    const at = this.count * RECORD_WORDS;
    this.views.i32.set(from.i32.subarray(o, o + RECORD_WORDS), at);
    this.count++;
    return at;
  }

  clear(): void {
    this.count = 0;
  }
}

