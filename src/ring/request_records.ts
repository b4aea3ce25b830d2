// The request record (front -> matcher): its layout, asserted when this module loads, the writer
// the front uses and the reader the matcher uses. records.ts has what it shares with events.
import { RequestKind, type Request } from '../engine/types.js';
import { CLIENT_ID_BYTES_MAX, WordsRequest as WordsRequest_ } from '../engine/client_id.js';
import { AGENT_NAME_BYTES_MAX as AGENT_NAME_BYTES_MAX_ } from '../engine/agents.js';
import type { SpscRing } from './spsc_ring.js';
import { CONSENT_KIND as CONSENT_KIND_, CONSENT_KIND_WORD, consentSlotCount, writeConsentSlots } from './consent.js';
import {
  ADDRESS_BYTES, bytesOf, CLIENT_ORDER_ID_BYTES_MAX as CLIENT_ORDER_ID_BYTES_MAX_, readAscii, RECORD_WORDS, writeAscii, type RecordViews,
} from './records.js';

// Module-local copies of imported constants used on the replay's hot path: an imported binding
// is a cell that optimized code loads and hole-checks at each use (src/ring/event_writer.ts).
const AGENT_NAME_BYTES_MAX = AGENT_NAME_BYTES_MAX_;
const WordsRequest = WordsRequest_;
const CONSENT_KIND = CONSENT_KIND_;
const CLIENT_ORDER_ID_BYTES_MAX = CLIENT_ORDER_ID_BYTES_MAX_;

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
const SIGNER_WORD = 12;
export const RQ_SIGNER_WORD = SIGNER_WORD;
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
const ADDRESS_WORD = 30;
export const RQ_ADDRESS_WORD = ADDRESS_WORD;
// The reader uses SIGNER_WORD and ADDRESS_WORD, not the exports: an exported const is a module
// cell even in its own module, which optimized code loads and hole-checks at each use (the
// matcher's per-request account resolution inlines both; docs/benchmarks.md, h17r).
/** Client order id bytes (ASCII, at most 36) in words 35..43. */
const RQ_CLIENT_ID_WORD = 35;
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

// Layout assertions (TIGER_STYLE: at load, not in the hot path).
if (RQ_LOT_F64 * 2 + 2 > RQ_KIND_WORD) throw new Error('request record: float64 fields overlap int32 fields');
if (CONSENT_KIND_WORD !== RQ_KIND_WORD) throw new Error('consent slots mark themselves in the request kind word');
if (RQ_CLIENT_ID_WORD + CLIENT_ORDER_ID_BYTES_MAX / 4 > RECORD_WORDS) throw new Error('request record too small');
// read copies an id (or an agent name) into a WordsRequest's words: they must hold the longest.
if (CLIENT_ORDER_ID_BYTES_MAX !== CLIENT_ID_BYTES_MAX || AGENT_NAME_BYTES_MAX > CLIENT_ID_BYTES_MAX) throw new Error('request record: client id words too small');
if (RQ_ADDRESS_WORD + ADDRESS_BYTES / 4 > RQ_CLIENT_ID_WORD) throw new Error('request address overlaps client id');
if (RQ_CLIENT_ID_WORD + CLIENT_ORDER_ID_BYTES_MAX / 4 > RQ_INNER_KIND_WORD || RQ_INNER_REJECT_WORD >= RQ_INNER_NONCE_F64 * 2 ||
  RQ_INNER_NONCE_F64 * 2 + 2 > RECORD_WORDS) throw new Error('request record: forced-inclusion fields overlap');
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
  private declare readonly ring: SpscRing;
  private declare readonly u8: Uint8Array;
  private unpublished = 0;
  /**
   * Byte offsets of the consent slots tryWrite claimed for the record it is writing (read by
   * writeConsentSlots before tryWrite returns), and their one lookup: no array and no closure per
   * signed request (issue 11, branch h11z).
   */
  private readonly consent_slots: number[] = [];
  private readonly consentSlotAt = (j: number): number => this.consent_slots[j];

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
      for (let j = 0; j < extra; j++) this.consent_slots[j] = this.ring.tryClaim() * 4;
      writeConsentSlots(this.u8, i, this.consentSlotAt, consent);
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
  private declare v: RecordViews;

  constructor(views: RecordViews) {
    this.v = views;
  }

  setViews(views: RecordViews): void {
    this.v = views;
  }

  get u8(): Uint8Array {
    return this.v.u8;
  }

  /** The same records as words (`u8` from the same byte: a byte offset o4 is word o4 >> 2). */
  get i32(): Int32Array {
    return this.v.i32;
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
    const named = r.kind === RequestKind.APPROVE_AGENT;
    const id_at = o + (named ? RQ_AGENT_NAME_WORD : RQ_CLIENT_ID_WORD);
    const id_len = len > 0 && len <= (named ? AGENT_NAME_BYTES_MAX : CLIENT_ORDER_ID_BYTES_MAX) ? len : 0;
    if (r instanceof WordsRequest) {
      // The id's words as the record holds them (client_id.ts), its string made only if read: a
      // string per request was ~180 instructions and half the replay's allocation (h19b, h20a).
      const ids = r.client_id;
      ids[0] = id_len;
      const words = (id_len + 3) >> 2;
      for (let k = 0; k < words; k++) ids[1 + k] = i[id_at + k];
      r.clientIdWritten();
    } else {
      r.client_order_id = id_len > 0 ? readAscii(this.v.u8, id_at * 4, id_len) : '';
    }
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
    const w = o + SIGNER_WORD;
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
    return (o + ADDRESS_WORD) * 4;
  }
}
