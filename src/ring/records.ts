// The fixed record layouts that cross the rings: requests (front -> matcher) and events
// (matcher -> front). One module, used by both sides, so the layout cannot drift; the layout is
// asserted when this module loads.
//
// A record is `RECORD_WORDS` 32-bit words. Numbers that can reach 2^53 (prices, quantities,
// balances, ids, nonces) sit in float64 words (exact for integers up to 2^53); small enums in
// int32 words; addresses and client order ids as raw bytes.
import type { EventSink, Request } from '../engine/types.js';
import { SpscRing } from './spsc_ring.js';

export const RECORD_WORDS = 48;

// ---- Request record: float64 fields (index into f64 from the slot's f64 base).
const RQ_SEQ = 0;
const RQ_NONCE = 1;
const RQ_PRICE = 2;
const RQ_QUANTITY = 3;
const RQ_ORDER_ID = 4;
const RQ_AMOUNT = 5;
const RQ_CREDIT_LIMIT = 6;
const RQ_TICK = 7;
const RQ_LOT = 8;
/** FORCE_INCLUDE: the payload's nonce (float64 index 23 = words 46..47). */
const RQ_INNER_NONCE = 23;
// int32 fields (word index from the slot's word offset).
const RQ_KIND = 18;
const RQ_ACCOUNT_HINT = 19;
const RQ_MARKET = 20;
const RQ_SIDE = 21;
const RQ_ORDER_TYPE = 22;
const RQ_TIF = 23;
const RQ_ASSET = 24;
const RQ_ASSET_QUOTE = 25;
const RQ_MAKER_BPS = 26;
const RQ_TAKER_BPS = 27;
const RQ_RATIO_PPM = 28;
const RQ_CLIENT_ID_LENGTH = 29;
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
const RQ_INNER_KIND = 44;
const RQ_INNER_REJECT = 45;

// ---- Event record.
const EV_SEQ = 0; // f64: the request sequence this event answers (0 for batch markers)
const EV_TYPE = 2; // int32 word
/** f64 field k of an event is at f64 index (offset >> 1) + 2 + k. */
const EV_FIELD0 = 2;
/** Accepted events carry the client order id (words 31..39) and its length (word 30). */
const EV_CLIENT_ID_LENGTH = 30;
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
} as const;

// Layout assertions (TIGER_STYLE: at load, not in the hot path).
if (RQ_LOT * 2 + 2 > RQ_KIND) throw new Error('request record: float64 fields overlap int32 fields');
if (RQ_CLIENT_ID_WORD + CLIENT_ORDER_ID_BYTES_MAX / 4 > RECORD_WORDS) throw new Error('request record too small');
if (RQ_ADDRESS_WORD + ADDRESS_BYTES / 4 > RQ_CLIENT_ID_WORD) throw new Error('request address overlaps client id');
if (RQ_CLIENT_ID_WORD + CLIENT_ORDER_ID_BYTES_MAX / 4 > RQ_INNER_KIND || RQ_INNER_REJECT >= RQ_INNER_NONCE * 2 ||
  RQ_INNER_NONCE * 2 + 2 > RECORD_WORDS) throw new Error('request record: forced-inclusion fields overlap');
if ((EV_FIELD0 + 13) * 2 > EV_CLIENT_ID_LENGTH) throw new Error('event record: fields overlap the client id');
if (EV_CLIENT_ID_WORD + CLIENT_ORDER_ID_BYTES_MAX / 4 > RECORD_WORDS) throw new Error('event record too small');
if (RECORD_WORDS % 2 !== 0) throw new Error('records must be 8-byte aligned');

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
   */
  tryWrite(seq: number, address: Uint8Array, account_hint: number, r: Request, referrer: Uint8Array | null = null): boolean {
    const o = this.ring.tryClaim();
    if (o < 0) return false;
    const f = this.ring.f64;
    const i = this.ring.i32;
    const fb = o >> 1;
    f[fb + RQ_SEQ] = seq;
    f[fb + RQ_NONCE] = r.nonce;
    f[fb + RQ_PRICE] = r.price_units;
    f[fb + RQ_QUANTITY] = r.quantity_units;
    f[fb + RQ_ORDER_ID] = r.order_id;
    f[fb + RQ_AMOUNT] = r.amount_units;
    f[fb + RQ_CREDIT_LIMIT] = r.credit_limit_units;
    f[fb + RQ_TICK] = r.tick_size_units;
    f[fb + RQ_LOT] = r.lot_size_units;
    i[o + RQ_KIND] = r.kind;
    i[o + RQ_ACCOUNT_HINT] = account_hint;
    i[o + RQ_MARKET] = r.market;
    i[o + RQ_SIDE] = r.side;
    i[o + RQ_ORDER_TYPE] = r.order_type;
    i[o + RQ_TIF] = r.tif;
    i[o + RQ_ASSET] = r.asset;
    i[o + RQ_ASSET_QUOTE] = r.asset_quote;
    i[o + RQ_MAKER_BPS] = r.maker_fee_bps;
    i[o + RQ_TAKER_BPS] = r.taker_fee_bps;
    i[o + RQ_RATIO_PPM] = r.auto_cancel_ratio_ppm;
    const coid = r.client_order_id;
    if (coid.length > CLIENT_ORDER_ID_BYTES_MAX) throw new Error('client_order_id longer than the record allows');
    i[o + RQ_CLIENT_ID_LENGTH] = coid.length;
    writeAscii(this.u8, (o + RQ_CLIENT_ID_WORD) * 4, coid);
    if (address.length !== ADDRESS_BYTES) throw new Error('address must be 20 bytes');
    this.u8.set(address, (o + RQ_ADDRESS_WORD) * 4);
    if (referrer !== null) {
      if (referrer.length !== ADDRESS_BYTES || coid.length > 0) throw new Error('a referrer address is 20 bytes and excludes a client id');
      this.u8.set(referrer, (o + RQ_SECOND_ADDRESS_WORD) * 4);
    }
    i[o + RQ_INNER_KIND] = r.inner_kind;
    i[o + RQ_INNER_REJECT] = r.inner_reject;
    f[fb + RQ_INNER_NONCE] = r.inner_nonce;
    this.unpublished++;
    return true;
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

  /** Fills `r` from the record at word offset `o`; returns the record's seq. */
  read(o: number, r: Request): number {
    const f = this.v.f64;
    const i = this.v.i32;
    const fb = o >> 1;
    r.nonce = f[fb + RQ_NONCE];
    r.price_units = f[fb + RQ_PRICE];
    r.quantity_units = f[fb + RQ_QUANTITY];
    r.order_id = f[fb + RQ_ORDER_ID];
    r.amount_units = f[fb + RQ_AMOUNT];
    r.credit_limit_units = f[fb + RQ_CREDIT_LIMIT];
    r.tick_size_units = f[fb + RQ_TICK];
    r.lot_size_units = f[fb + RQ_LOT];
    r.kind = i[o + RQ_KIND];
    r.market = i[o + RQ_MARKET];
    r.side = i[o + RQ_SIDE];
    r.order_type = i[o + RQ_ORDER_TYPE];
    r.tif = i[o + RQ_TIF];
    r.asset = i[o + RQ_ASSET];
    r.asset_quote = i[o + RQ_ASSET_QUOTE];
    r.maker_fee_bps = i[o + RQ_MAKER_BPS];
    r.taker_fee_bps = i[o + RQ_TAKER_BPS];
    r.auto_cancel_ratio_ppm = i[o + RQ_RATIO_PPM];
    const len = i[o + RQ_CLIENT_ID_LENGTH];
    r.client_order_id = len > 0 && len <= CLIENT_ORDER_ID_BYTES_MAX ? readAscii(this.v.u8, (o + RQ_CLIENT_ID_WORD) * 4, len) : '';
    r.inner_kind = i[o + RQ_INNER_KIND];
    r.inner_reject = i[o + RQ_INNER_REJECT];
    r.inner_nonce = f[fb + RQ_INNER_NONCE];
    // Resolved by the matcher from the referrer address (referrerByteOffset).
    r.referrer_account = 0;
    return f[fb + RQ_SEQ];
  }

  /** Byte offset of a REFER's referrer address in `u8`. */
  referrerByteOffset(o: number): number {
    return (o + RQ_SECOND_ADDRESS_WORD) * 4;
  }

  accountHint(o: number): number {
    return this.v.i32[o + RQ_ACCOUNT_HINT];
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
    this.ring.f64[(o >> 1) + EV_SEQ] = this.seq;
    this.ring.i32[o + EV_TYPE] = type;
    return o;
  }

  /** Publishes everything claimed so far. */
  flush(): void {
    if (this.claimed > 0) {
      this.ring.publishBatch(this.claimed);
      this.claimed = 0;
    }
  }

  private fields(o: number): number {
    return (o >> 1) + EV_FIELD0;
  }

  accepted(kind: number, account: number, order_id: number): void {
    this.last_accepted = true;
    const o = this.claim(EventType.ACCEPTED);
    const f = this.ring.f64;
    const b = this.fields(o);
    const r = this.current;
    f[b] = kind;
    f[b + 1] = account;
    f[b + 2] = order_id;
    if (r !== null) {
      f[b + 3] = r.nonce;
      f[b + 4] = r.market;
      f[b + 5] = r.side;
      f[b + 6] = r.order_type;
      f[b + 7] = r.tif;
      f[b + 8] = r.price_units;
      f[b + 9] = r.quantity_units;
      f[b + 10] = r.asset;
      f[b + 11] = r.amount_units;
      f[b + 12] = r.order_id;
      const coid = r.client_order_id;
      this.ring.i32[o + EV_CLIENT_ID_LENGTH] = coid.length;
      writeAscii(this.u8, (o + EV_CLIENT_ID_WORD) * 4, coid);
    } else {
      this.ring.i32[o + EV_CLIENT_ID_LENGTH] = 0;
    }
  }

  rejected(kind: number, account: number, code: number, reason: number): void {
    this.last_accepted = false;
    const o = this.claim(EventType.REJECTED);
    const f = this.ring.f64;
    const b = this.fields(o);
    f[b] = kind;
    f[b + 1] = account;
    f[b + 2] = code;
    f[b + 3] = reason;
  }

  fill(fill_id: number, market: number, taker_order_id: number, maker_order_id: number,
    taker_account: number, maker_account: number, taker_side: number, price_units: number,
    quantity_units: number, taker_fee_units: number, maker_fee_units: number): void {
    const o = this.claim(EventType.FILL);
    const f = this.ring.f64;
    const b = this.fields(o);
    f[b] = fill_id;
    f[b + 1] = market;
    f[b + 2] = taker_order_id;
    f[b + 3] = maker_order_id;
    f[b + 4] = taker_account;
    f[b + 5] = maker_account;
    f[b + 6] = taker_side;
    f[b + 7] = price_units;
    f[b + 8] = quantity_units;
    f[b + 9] = taker_fee_units;
    f[b + 10] = maker_fee_units;
  }

  orderUpdate(order_id: number, account: number, market: number, side: number, status: number,
    price_units: number, quantity_units: number, filled_units: number, remaining_units: number,
    last_fill_price_units: number, reason: number): void {
    const o = this.claim(EventType.ORDER_UPDATE);
    const f = this.ring.f64;
    const b = this.fields(o);
    f[b] = order_id;
    f[b + 1] = account;
    f[b + 2] = market;
    f[b + 3] = side;
    f[b + 4] = status;
    f[b + 5] = price_units;
    f[b + 6] = quantity_units;
    f[b + 7] = filled_units;
    f[b + 8] = remaining_units;
    f[b + 9] = last_fill_price_units;
    f[b + 10] = reason;
  }

  balance(account: number, asset: number, available_units: number, locked_units: number, reason: number): void {
    const o = this.claim(EventType.BALANCE);
    const f = this.ring.f64;
    const b = this.fields(o);
    f[b] = account;
    f[b + 1] = asset;
    f[b + 2] = available_units;
    f[b + 3] = locked_units;
    f[b + 4] = reason;
  }

  referral(referred: number, referrer: number, active_until_ms: number): void {
    this.numbers(EventType.REFERRAL, [referred, referrer, active_until_ms]);
  }

  referralShare(fill_id: number, referred: number, referrer: number, asset: number, amount_units: number): void {
    this.numbers(EventType.REFERRAL_SHARE, [fill_id, referred, referrer, asset, amount_units]);
  }

  inboxQueued(entry_id: number, account: number, kind: number, nonce: number, deadline_ms: number,
    referrer_account: number, reject: number): void {
    this.numbers(EventType.INBOX_QUEUED, [entry_id, account, kind, nonce, deadline_ms, referrer_account, reject]);
  }

  /** The included request becomes `current`: its accepted event carries its fields and client id. */
  inboxIncluded(entry_id: number, request: Request): void {
    this.current = request;
    this.numbers(EventType.INBOX_INCLUDED, [entry_id, request.account, request.kind, request.nonce]);
  }

  account(account: number, address: Uint8Array, address_offset: number): void {
    const o = this.claim(EventType.ACCOUNT);
    this.ring.f64[this.fields(o)] = account;
    this.u8.set(address.subarray(address_offset, address_offset + ADDRESS_BYTES), (o + EV_ADDRESS_WORD) * 4);
  }

  /** A record of up to 13 numeric fields (batch markers, market, fees, credit). */
  numbers(type: number, values: readonly number[]): void {
    const o = this.claim(type);
    const f = this.ring.f64;
    const b = this.fields(o);
    for (let k = 0; k < values.length; k++) f[b + k] = values[k];
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
    return this.v.f64[(o >> 1) + EV_SEQ];
  }

  type(o: number): number {
    return this.v.i32[o + EV_TYPE];
  }

  field(o: number, k: number): number {
    return this.v.f64[(o >> 1) + EV_FIELD0 + k];
  }

  clientOrderId(o: number): string {
    const len = this.v.i32[o + EV_CLIENT_ID_LENGTH];
    return len > 0 && len <= CLIENT_ORDER_ID_BYTES_MAX ? readAscii(this.v.u8, (o + EV_CLIENT_ID_WORD) * 4, len) : '';
  }

  addressHex(o: number): string {
    const start = (o + EV_ADDRESS_WORD) * 4;
    let s = '0x';
    for (let i = 0; i < ADDRESS_BYTES; i++) s += HEX_BYTE[this.v.u8[start + i]];
    return s;
  }
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

const HEX_BYTE: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
