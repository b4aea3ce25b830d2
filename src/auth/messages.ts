// The exact texts a wallet signs (EIP-191 personal_sign) for each signed operation, per DECISIONS
// "Signatures". Fields are written as the request sent them: strings verbatim (no case folding;
// addresses compare case-insensitively only after recovery), integers in plain decimal.
//
// Builders throw TypeError/RangeError on a value that has no single text form (a fractional or
// unsafe number, a non-hex payload): the gateway validates shapes before it builds a message.
import { keccak_256 } from '@noble/hashes/sha3.js';
import { parseHexAnyLength, toHex0x } from './hex.js';
import { asciiRun, JsonText } from '../util/json_text.js';

/** Service token, the first segment of every colon-form message. */
export const SERVICE_TOKEN = 'ringbook';
/** Display name in the WebSocket challenge text. */
export const SERVICE_DISPLAY_NAME = 'Ringbook';

/** An integer field: a safe-integer number, a bigint, or a string of decimal digits as sent. */
export type IntText = number | bigint | string;

const DECIMAL = /^-?[0-9]+$/;

/** Plain decimal text of an integer field; throws when the value has no exact integer text. */
export function intText(value: IntText, field: string): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`${field} must be a safe integer`);
    return String(value);
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string' && DECIMAL.test(value)) return value;
  throw new TypeError(`${field} must be an integer`);
}

function str(value: string, field: string): string {
  if (typeof value !== 'string') throw new TypeError(`${field} must be a string`);
  return value;
}

export interface OrderMessageFields {
  market_id: string;
  side: string;
  /** Fixed-point price; null/undefined (market orders) is written as 0. */
  price?: IntText | null;
  quantity: IntText;
  nonce: IntText;
}

export interface OrderJsonMessageFields extends OrderMessageFields {
  order_type: string;
  time_in_force: string;
  /** Optional members, signed only when the body carries them (DECISIONS "Market-maker features"). */
  stp?: string | null;
  expires_after_ms?: IntText | null;
}

/** `ringbook:order:{market_id}:{side}:{price}:{quantity}:{nonce}` (price 0 for market orders). */
export function orderMessage(f: OrderMessageFields): string {
  return `${SERVICE_TOKEN}:order:${str(f.market_id, 'market_id')}:${str(f.side, 'side')}:${intText(
    f.price ?? 0,
    'price',
  )}:${intText(f.quantity, 'quantity')}:${intText(f.nonce, 'nonce')}`;
}

/**
 * Compact JSON form, keys in exactly this order, numbers as JSON integers, no spaces:
 * `{"market_id":..,"side":..,"price":..,"quantity":..,"order_type":..,"time_in_force":..,"nonce":..}`,
 * then `,"stp":..` and `,"expires_after_ms":..` when the order carries them (in that order).
 * Price is 0 for market orders. This is the form the client SDK signs; the colon form has no
 * place for the optional members, so an order carrying them must be signed in this one.
 */
export function orderJsonMessage(f: OrderJsonMessageFields): string {
  // Written into one reused buffer (util/json_text.ts): the server builds this text for every
  // order, and a template literal of ~20 parts left ~20 partial strings behind each time (issue 11).
  // The runs between the numbers come whole from PairRuns (the members' names and their strings
  // as one run each: 4 copies and 3 numbers an order where there were 10 copies, 4 quoted strings
  // and 3 numbers; issue 11, h22v).
  const t = json_form.begin();
  head_runs.writeInto(t, str(f.market_id, 'market_id'), str(f.side, 'side'));
  jsonIntInto(t, f.price ?? 0, 'price');
  jsonIntInto(t.append(K_QUANTITY), f.quantity, 'quantity');
  middle_runs.writeInto(t, str(f.order_type, 'order_type'), str(f.time_in_force, 'time_in_force'));
  jsonIntInto(t, f.nonce, 'nonce');
  if (f.stp !== undefined && f.stp !== null) t.append(K_STP).str(str(f.stp, 'stp'));
  if (f.expires_after_ms !== undefined && f.expires_after_ms !== null) jsonIntInto(t.append(K_EXPIRES_AFTER_MS), f.expires_after_ms, 'expires_after_ms');
  return t.append(K_END).text();
}

// The JSON form's fixed runs as ASCII bytes, copied by append() (raw() read them char by char:
// ~2,600 instructions per order; issue 11, branch h17f).
const ascii = asciiRun;
const K_MARKET_ID = ascii('{"market_id":');
const K_SIDE = ascii(',"side":');
const K_PRICE = ascii(',"price":');
const K_QUANTITY = ascii(',"quantity":');
const K_ORDER_TYPE = ascii(',"order_type":');
const K_TIME_IN_FORCE = ascii(',"time_in_force":');
const K_NONCE = ascii(',"nonce":');
const K_STP = ascii(',"stp":');
const K_EXPIRES_AFTER_MS = ascii(',"expires_after_ms":');
const K_END = ascii('}');

/** Pairs of strings PairRuns keeps, each kind (a market makes 2 sides; 2 order types x 4 times in force). */
const PAIR_RUNS = 8;

/**
 * The run `k1 a k2 b k3` (a and b JSON strings) of the last PAIR_RUNS distinct pairs (a, b) as
 * ASCII bytes, written once by JsonText (so the same bytes as writing its parts) and copied whole
 * after: an order's `{"market_id":"ETH-USDC","side":"bid","price":` and
 * `,"order_type":"limit","time_in_force":"gtc","nonce":` (issue 11, h22v: the order's strings
 * take a handful of values; the JSON parser's strings are internalized, so a hit is a pointer
 * compare or two). A pair whose text is not ASCII is not kept (append copies ASCII only): its
 * parts are written each time, as before.
 */
class PairRuns {
  readonly #a: (string | null)[] = new Array<string | null>(PAIR_RUNS).fill(null);
  readonly #b: (string | null)[] = new Array<string | null>(PAIR_RUNS).fill(null);
  readonly #runs: Uint8Array[] = new Array<Uint8Array>(PAIR_RUNS).fill(K_END);
  /** The slot the next new pair takes (round robin). */
  #next = 0;
  readonly #scratch = new JsonText();
  readonly #k1: Uint8Array;
  readonly #k2: Uint8Array;
  readonly #k3: Uint8Array;

  constructor(k1: Uint8Array, k2: Uint8Array, k3: Uint8Array) {
    this.#k1 = k1;
    this.#k2 = k2;
    this.#k3 = k3;
  }

  /** Writes the run of (a, b) into `out`. */
  writeInto(out: JsonText, a: string, b: string): void {
    for (let i = 0; i < PAIR_RUNS; i++) {
      if (this.#a[i] === a && this.#b[i] === b) {
        out.append(this.#runs[i]);
        return;
      }
    }
    const t = this.#scratch.begin().append(this.#k1).str(a).append(this.#k2).str(b).append(this.#k3);
    if (!t.isAscii) {
      out.append(this.#k1).str(a).append(this.#k2).str(b).append(this.#k3);
      return;
    }
    const i = this.#next;
    this.#next = (i + 1) % PAIR_RUNS;
    this.#a[i] = a;
    this.#b[i] = b;
    // A copy: the view is of the scratch's Buffer, whose slice() is another view of it.
    out.append((this.#runs[i] = Uint8Array.from(t.view())));
  }
}

const head_runs = new PairRuns(K_MARKET_ID, K_SIDE, K_PRICE);
const middle_runs = new PairRuns(K_ORDER_TYPE, K_TIME_IN_FORCE, K_NONCE);

const json_form = new JsonText();

/** jsonInt's text written into `t` (a safe-integer number without a string of its own). */
function jsonIntInto(t: JsonText, value: IntText, field: string): void {
  if (typeof value === 'number' && Number.isSafeInteger(value)) t.num(value);
  else t.raw(jsonInt(value, field));
}

/** A JSON integer: as intText, but "-0" and leading zeros (not valid JSON numbers) are refused. */
function jsonInt(value: IntText, field: string): string {
  const t = intText(value, field);
  if (/^-?0[0-9]|^-0$/.test(t)) throw new TypeError(`${field} is not a canonical integer`);
  return t;
}

export interface CancelMessageFields {
  /** May be "" (or absent) when client_order_id names the order. */
  order_id?: IntText | null;
  /** May be "" (or absent) when order_id names the order. */
  client_order_id?: string | null;
  nonce: IntText;
}

/** `ringbook:cancel:{order_id}:{client_order_id}:{nonce}`; an absent id is the empty string. */
export function cancelMessage(f: CancelMessageFields): string {
  const orderId = f.order_id === undefined || f.order_id === null || f.order_id === '' ? '' : intText(f.order_id, 'order_id');
  const clientId = f.client_order_id === undefined || f.client_order_id === null ? '' : str(f.client_order_id, 'client_order_id');
  return `${SERVICE_TOKEN}:cancel:${orderId}:${clientId}:${intText(f.nonce, 'nonce')}`;
}

export interface AmendMessageFields {
  order_id: IntText;
  price: IntText;
  quantity: IntText;
  nonce: IntText;
}

/** `ringbook:amend:{order_id}:{price}:{quantity}:{nonce}`. */
export function amendMessage(f: AmendMessageFields): string {
  return `${SERVICE_TOKEN}:amend:${intText(f.order_id, 'order_id')}:${intText(f.price, 'price')}:${intText(
    f.quantity,
    'quantity',
  )}:${intText(f.nonce, 'nonce')}`;
}

export interface CancelAllMessageFields {
  /** Absent/null means every market, written `*`. */
  market_id?: string | null;
  nonce: IntText;
}

/** `ringbook:cancel-all:{market_id or *}:{nonce}`. */
export function cancelAllMessage(f: CancelAllMessageFields): string {
  const market = f.market_id === undefined || f.market_id === null ? '*' : str(f.market_id, 'market_id');
  return `${SERVICE_TOKEN}:cancel-all:${market}:${intText(f.nonce, 'nonce')}`;
}

export interface CancelAfterMessageFields {
  /** 0 disarms; otherwise 1,000 to 86,400,000 (the server judges the range). */
  timeout_ms: IntText;
  nonce: IntText;
}

/** `ringbook:cancel-after:{timeout_ms}:{nonce}` (the dead-man switch, POST /orders/cancel-after). */
export function cancelAfterMessage(f: CancelAfterMessageFields): string {
  return `${SERVICE_TOKEN}:cancel-after:${intText(f.timeout_ms, 'timeout_ms')}:${intText(f.nonce, 'nonce')}`;
}

export interface ApproveAgentMessageFields {
  /** The agent's address exactly as the body carries it. */
  agent: string;
  name: string;
  valid_until_ms: IntText;
  nonce: IntText;
}

/** `ringbook:approve-agent:{agent}:{name}:{valid_until_ms}:{nonce}` (POST /agents, signed by the user). */
export function approveAgentMessage(f: ApproveAgentMessageFields): string {
  return `${SERVICE_TOKEN}:approve-agent:${str(f.agent, 'agent')}:${str(f.name, 'name')}:${intText(f.valid_until_ms, 'valid_until_ms')}:${intText(f.nonce, 'nonce')}`;
}

/** `ringbook:revoke-agent:{agent}:{nonce}` (POST /agents/revoke, signed by the user). */
export function revokeAgentMessage(f: { agent: string; nonce: IntText }): string {
  return `${SERVICE_TOKEN}:revoke-agent:${str(f.agent, 'agent')}:${intText(f.nonce, 'nonce')}`;
}

export interface ReferralMessageFields {
  referred: string;
  referrer: string;
  nonce: IntText;
}

/** `ringbook:referral:{referred}:{referrer}:{nonce}`, signed by the referred user. */
export function referralMessage(f: ReferralMessageFields): string {
  return `${SERVICE_TOKEN}:referral:${str(f.referred, 'referred')}:${str(f.referrer, 'referrer')}:${intText(
    f.nonce,
    'nonce',
  )}`;
}

export interface WithdrawalMessageFields {
  address: string;
  /** Asset symbol as sent (e.g. `USDC`). */
  asset: string;
  /** Amount as sent: engine units, or wei for ETH (may exceed 2^53: pass a bigint or digit string). */
  amount: IntText;
  nonce: IntText;
}

/** `ringbook:withdraw:{address}:{asset}:{amount}:{nonce}`. */
export function withdrawalMessage(f: WithdrawalMessageFields): string {
  return `${SERVICE_TOKEN}:withdraw:${str(f.address, 'address')}:${str(f.asset, 'asset')}:${intText(
    f.amount,
    'amount',
  )}:${intText(f.nonce, 'nonce')}`;
}

/**
 * keccak256 of a force-include payload as lowercase 0x hex. The payload is the hex of a signed
 * request body; its decoded bytes are hashed (as viem's keccak256(hex) does). Throws on bad hex.
 */
export function forceIncludePayloadHash(payload: string | Uint8Array): string {
  const bytes = typeof payload === 'string' ? parseHexAnyLength(payload) : payload;
  if (!(bytes instanceof Uint8Array)) throw new TypeError('payload must be hex');
  return toHex0x(keccak_256(bytes));
}

export interface ForceIncludeMessageFields {
  user: string;
  /** Hex string (0x optional) or the raw bytes. */
  payload: string | Uint8Array;
  nonce: IntText;
}

/** The request kinds a force-include payload may carry, as its optional `kind` member names them. */
export const FORCED_KINDS = ['order', 'cancel', 'amend', 'cancel_all', 'withdrawal', 'referral'] as const;
export type ForcedKind = (typeof FORCED_KINDS)[number];

/** Largest payload the server queues, in bytes (of the decoded payload, not of its hex). */
export const FORCED_PAYLOAD_BYTES_MAX = 4096;

function hasOwn(body: Record<string, unknown>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(body, key);
}

/**
 * The kind of a payload body without a `kind` member, from the members it has (docs/api.md,
 * "POST /force-include"; first match wins). One rule for the server and the SDK.
 */
export function inferForcedKind(body: Record<string, unknown>): ForcedKind {
  if (hasOwn(body, 'referred') && hasOwn(body, 'referrer')) return 'referral';
  if (hasOwn(body, 'asset') && hasOwn(body, 'amount')) return 'withdrawal';
  if (hasOwn(body, 'side')) return 'order';
  if (hasOwn(body, 'order_id') && hasOwn(body, 'price') && hasOwn(body, 'quantity')) return 'amend';
  if (hasOwn(body, 'order_id') || hasOwn(body, 'client_order_id')) return 'cancel';
  return 'cancel_all';
}

/** `ringbook:force-include:{user}:{keccak256(payload) as 0x hex}:{nonce}`. */
export function forceIncludeMessage(f: ForceIncludeMessageFields): string {
  return `${SERVICE_TOKEN}:force-include:${str(f.user, 'user')}:${forceIncludePayloadHash(f.payload)}:${intText(
    f.nonce,
    'nonce',
  )}`;
}

/** WebSocket challenge text: `Ringbook Exchange\nNonce: {nonce}`. */
export function challengeMessage(nonce: string): string {
  return `${SERVICE_DISPLAY_NAME} Exchange\nNonce: ${str(nonce, 'nonce')}`;
}
