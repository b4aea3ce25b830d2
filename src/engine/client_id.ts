// A client order id (or an agent's name, which rides in the same field) as words, the way the ring
// record carries it: the fast engine's hot paths compare, hash and store these words, and a string
// is made only where one is read (a consumer of `client_order_id`, the canonical state).
//
// Why: a journal replay made a string per request (`String.fromCharCode` in the request reader,
// ~180 instructions) and the engine kept it for every resting order, so each scavenge copied the
// open orders' strings: 47% of the replay's allocation (docs/benchmarks.md, h19b, h20a). An intern
// cache would only have hit on the bench's own ids, never on real ones.
//
// The layout of an id's words (`ClientIdWords`, and each open order's entry in ClientIdIndex):
// word 0 its length in bytes, words 1..9 its bytes, four a word in memory order (little-endian:
// asserted below), bytes past the length undefined (never compared, hashed or copied out).
import { NO_MARKET, type Request } from './types.js';

/** Bytes a client order id has at most (CLIENT_ORDER_ID_BYTES_MAX in src/ring/records.ts is the record's). */
export const CLIENT_ID_BYTES_MAX = 36;
/** Words of an id: its length, then its bytes (CLIENT_ID_BYTES_MAX / 4 words). */
export const CLIENT_ID_WORDS = 1 + CLIENT_ID_BYTES_MAX / 4;
/**
 * The length word of a string no record can carry (over 36 units, or a unit above 0xFF): it is
 * no valid id and equals no stored one, as for the reference engine, which compares strings.
 */
export const CLIENT_ID_UNREPRESENTABLE = -1;

// The words are read through Int32Array views of byte records and masked by byte position.
if (new Uint8Array(new Uint32Array([1]).buffer)[0] !== 1) throw new Error('client ids as words need a little-endian machine');

/** `s` as words into `into` (at word `at`); an unrepresentable string gets length CLIENT_ID_UNREPRESENTABLE. */
export function clientIdFromString(s: string, into: Int32Array, at: number): void {
  const n = s.length;
  if (n > CLIENT_ID_BYTES_MAX) {
    into[at] = CLIENT_ID_UNREPRESENTABLE;
    return;
  }
  let w = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c > 0xff) {
      into[at] = CLIENT_ID_UNREPRESENTABLE;
      return;
    }
    w |= c << ((i & 3) << 3);
    if ((i & 3) === 3) {
      into[at + 1 + (i >> 2)] = w;
      w = 0;
    }
  }
  if ((n & 3) !== 0) into[at + 1 + (n >> 2)] = w;
  into[at] = n;
}

/** The id at word `at` as a string, one UTF-16 unit a byte ('' for length 0). */
export function clientIdString(words: Int32Array, at: number): string {
  const n = words[at];
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode((words[at + 1 + (i >> 2)] >>> ((i & 3) << 3)) & 0xff);
  return s;
}

/** Bytes allowed in a client order id: [A-Za-z0-9_-] (the gateway's rule, and the reference engine's). */
const ID_BYTE_OK = (() => {
  const t = new Uint8Array(256);
  for (let c = 0; c < 256; c++) {
    t[c] = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 ? 1 : 0;
  }
  return t;
})();

/**
 * Whether the id at word `at` is a valid client order id: 1 to 36 bytes of [A-Za-z0-9_-] (the
 * reference engine's rule). A word at a time: its four bytes looked up and and-ed, one test a word.
 */
export function clientIdValid(words: Int32Array, at: number): boolean {
  const n = words[at];
  if (!(n >= 1 && n <= CLIENT_ID_BYTES_MAX)) return false;
  const ok = ID_BYTE_OK;
  const full = n >> 2;
  for (let k = 1; k <= full; k++) {
    const w = words[at + k];
    if ((ok[w & 0xff] & ok[(w >>> 8) & 0xff] & ok[(w >>> 16) & 0xff] & ok[w >>> 24]) === 0) return false;
  }
  const tail = n & 3;
  if (tail === 0) return true;
  // The bytes after the id in its last word are not the id's: each one past `tail` counts as valid.
  const w = words[at + 1 + full];
  return (ok[w & 0xff] & (tail < 2 ? 1 : ok[(w >>> 8) & 0xff]) & (tail < 3 ? 1 : ok[(w >>> 16) & 0xff])) !== 0;
}

/**
 * Murmur3's word step over the id's words (the last one masked to its bytes), seeded with the
 * account and the length, then its finaliser. Only ClientIdIndex's cells depend on it (nothing
 * iterates them), so it may change freely.
 */
export function clientIdHash(account: number, words: Int32Array, at: number): number {
  const n = words[at];
  let h = Math.imul(account ^ 0x2545f491, 0x01000193) ^ n;
  const full = n >> 2;
  const tail = n & 3;
  for (let k = 0; k <= full; k++) {
    let w: number;
    if (k < full) w = words[at + 1 + k];
    else if (tail !== 0) w = words[at + 1 + k] & ((1 << (tail << 3)) - 1);
    else break;
    w = Math.imul(w, 0xcc9e2d51);
    w = (w << 15) | (w >>> 17);
    h ^= Math.imul(w, 0x1b873593);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h | 0;
}

/** Whether the ids at `a[ai]` and `b[bi]` are the same (length and bytes). */
export function clientIdEquals(a: Int32Array, ai: number, b: Int32Array, bi: number): boolean {
  const n = a[ai];
  if (b[bi] !== n) return false;
  const full = n >> 2;
  for (let k = 1; k <= full; k++) if (a[ai + k] !== b[bi + k]) return false;
  const tail = n & 3;
  if (tail === 0) return true;
  const mask = (1 << (tail << 3)) - 1;
  return ((a[ai + 1 + full] ^ b[bi + 1 + full]) & mask) === 0;
}

/** Copies the id at `from[fi]` to `to[ti]` (its length word and the words its bytes use). */
export function clientIdCopy(from: Int32Array, fi: number, to: Int32Array, ti: number): void {
  const n = from[fi];
  to[ti] = n;
  const end = (n + 3) >> 2;
  for (let k = 1; k <= end; k++) to[ti + k] = from[fi + k];
}

/**
 * A Request whose client id the request reader wrote as words (`client_id`, the layout above):
 * `client_order_id` is made from them when first read, so a request whose id nobody reads as a
 * string allocates nothing. Assigning `client_order_id` sets both. The fast engine takes the words
 * of such a request as they are (clientIdWordsOf); of any other Request it makes them from the string.
 */
export class WordsRequest implements Request {
  kind = 0;
  account = 0;
  nonce = 0;
  market = NO_MARKET;
  side = 0;
  order_type = 0;
  tif = 0;
  price_units = 0;
  quantity_units = 0;
  order_id = 0;
  asset = 0;
  asset_quote = 0;
  amount_units = 0;
  maker_fee_bps = 0;
  taker_fee_bps = 0;
  credit_limit_units = 0;
  auto_cancel_ratio_ppm = 0;
  tick_size_units = 0;
  lot_size_units = 0;
  referrer_account = 0;
  inner_kind = 0;
  inner_nonce = 0;
  inner_reject = 0;
  stp = 0;
  expires_after_ms = 0;
  signer = 0;
  agent_account = 0;
  /** The id as words (length at 0). */
  readonly client_id = new Int32Array(CLIENT_ID_WORDS);
  /** The id as a string once made (or assigned); null while only the words hold it. */
  private client_id_text: string | null = '';

  get client_order_id(): string {
    let t = this.client_id_text;
    if (t === null) {
      t = clientIdString(this.client_id, 0);
      this.client_id_text = t;
    }
    return t;
  }

  set client_order_id(s: string) {
    this.client_id_text = s;
    clientIdFromString(s, this.client_id, 0);
  }

  /** The words were just written (`client_id`): the string is made when first read. */
  clientIdWritten(): void {
    this.client_id_text = null;
  }
}

// A non-exported const: an exported class (or const) is a module cell, loaded and hole-checked at
// each use even in its own module (docs/benchmarks.md, h17r).
const WordsRequestClass = WordsRequest;

/**
 * The words of `r`'s client id: a WordsRequest's own, else made from the string into `scratch`
 * (CLIENT_ID_WORDS long; valid until the next call with it).
 */
export function clientIdWordsOf(r: Request, scratch: Int32Array): Int32Array {
  if (r instanceof WordsRequestClass) return r.client_id;
  clientIdFromString(r.client_order_id, scratch, 0);
  return scratch;
}
