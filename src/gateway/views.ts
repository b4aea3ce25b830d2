// JSON shapes of the HTTP API (docs/api.md). Prices, quantities, balances and fees are integers
// in units (fixed-point x 1e6) over HTTP; display strings where the spec says so.
import { formatUnits } from '../money/index.js';
import { ORDER_STATUS_NAMES, ORDER_TYPE_NAMES, SIDE_NAMES, TIF_NAMES } from '../engine/types.js';
import { ppmToRatio } from '../engine/rules.js';
import type { ReadModel } from '../read_model/read_model.js';
import type { FillView, MarketView, OrderView, TradeView } from '../read_model/views.js';
import { asciiRun, JsonText } from '../util/json_text.js';
import { OK_BODY_PREFIX, OK_BODY_SUFFIX } from './envelope.js';

let last_iso_ms = NaN;
let last_iso = '';

/** ISO 8601 of epoch `ms`. The last one is kept: a batch's answers share its time (1.7% of the front). */
export function isoTime(ms: number): string {
  if (ms !== last_iso_ms) {
    last_iso = new Date(ms).toISOString();
    last_iso_ms = ms;
  }
  return last_iso;
}

/** One encoder for this module's bytes (a new TextEncoder per cached time was an object per new millisecond). */
const utf8 = new TextEncoder();

/** 9999-12-31T23:59:59.999Z: the last epoch ms whose ISO text has a four-digit year (isoJsonInto's range). */
const ISO_FOUR_DIGIT_YEAR_MS_MAX = 253_402_300_799_999;
const MS_PER_DAY = 86_400_000;
/** `"YYYY-MM-DDTHH:mm:ss.sssZ"` with its quotes. */
const ISO_JSON_BYTES = 26;

function two(b: Uint8Array, at: number, v: number): void {
  const q = (v / 10) | 0;
  b[at] = 0x30 + q;
  b[at + 1] = 0x30 + v - 10 * q;
}

/**
 * Writes JSON.stringify(new Date(ms).toISOString()) as bytes into `b` (26 of them) for an integer
 * `ms` from 0 to ISO_FOUR_DIGIT_YEAR_MS_MAX, by civil-from-days arithmetic (H. Hinnant's
 * algorithm): no Date, no ISO string, no JSON string and no encoded copy per new time (issue 11:
 * a cancel's or amend's answer carries its order's older created time, which missed the cache of
 * the last two times and cost those four objects, ~0.9% of the front at max rate, 2026-11-27).
 * False, nothing written, outside that range (the caller takes Date's path).
 */
function isoJsonInto(b: Uint8Array, ms: number): boolean {
  if (!(Number.isSafeInteger(ms) && ms >= 0 && ms <= ISO_FOUR_DIGIT_YEAR_MS_MAX)) return false;
  const days = Math.floor(ms / MS_PER_DAY);
  let in_day = ms - days * MS_PER_DAY;
  // Days since 1970-01-01 -> year, month, day (proleptic Gregorian, eras of 400 years from 0000-03-01).
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const millis = in_day % 1000;
  in_day = (in_day - millis) / 1000;
  const seconds = in_day % 60;
  in_day = (in_day - seconds) / 60;
  const minutes = in_day % 60;
  const hours = (in_day - minutes) / 60;
  b[0] = 0x22;
  two(b, 1, (year / 100) | 0);
  two(b, 3, year % 100);
  b[5] = 0x2d; // -
  two(b, 6, month);
  b[8] = 0x2d;
  two(b, 9, day);
  b[11] = 0x54; // T
  two(b, 12, hours);
  b[14] = 0x3a; // :
  two(b, 15, minutes);
  b[17] = 0x3a;
  two(b, 18, seconds);
  b[20] = 0x2e; // .
  b[21] = 0x30 + ((millis / 100) | 0);
  two(b, 22, millis % 100);
  b[24] = 0x5a; // Z
  b[25] = 0x22;
  return true;
}

/**
 * The JSON string of isoTime(ms) (quoted) as bytes, for the last two times asked (an answer's
 * created and updated times). A miss rewrites a slot's own bytes in place (isoJsonInto); only a
 * time outside its range takes Date's path (and its objects).
 */
const iso_json_ms = [NaN, NaN];
const iso_json: Uint8Array[] = [new Uint8Array(ISO_JSON_BYTES), new Uint8Array(ISO_JSON_BYTES)];
let iso_json_next = 0;

function isoJsonBytes(ms: number): Uint8Array {
  if (iso_json_ms[0] === ms) return iso_json[0];
  if (iso_json_ms[1] === ms) return iso_json[1];
  const k = iso_json_next;
  iso_json_next = 1 - k;
  iso_json_ms[k] = ms;
  if (iso_json[k].length !== ISO_JSON_BYTES) iso_json[k] = new Uint8Array(ISO_JSON_BYTES);
  if (!isoJsonInto(iso_json[k], ms)) iso_json[k] = utf8.encode(JSON.stringify(isoTime(ms)));
  return iso_json[k];
}

export function orderRecord(rm: ReadModel, o: OrderView): Record<string, unknown> {
  return {
    order_id: o.order_id,
    client_order_id: o.client_order_id,
    status: ORDER_STATUS_NAMES[o.status],
    market_id: rm.markets[o.market]?.id ?? '',
    side: SIDE_NAMES[o.side],
    order_type: ORDER_TYPE_NAMES[o.order_type],
    time_in_force: TIF_NAMES[o.tif],
    price: o.price,
    quantity: o.quantity,
    filled_quantity: o.filled,
    remaining_quantity: o.remaining,
    last_fill_price: o.last_fill_price,
    created_at: isoTime(o.created_ms),
    updated_at: isoTime(o.updated_ms),
  };
}

export function immediateFill(f: FillView): Record<string, unknown> {
  return { fill_id: f.fill_id, price: f.price, quantity: f.quantity, fee: f.fee, is_maker: f.is_maker };
}

const answer_text = new JsonText();
const OK_PREFIX_BYTES = utf8.encode(OK_BODY_PREFIX);
const OK_SUFFIX_BYTES = utf8.encode(OK_BODY_SUFFIX);

/** The generic answer of an accepted order: what orderAnswerJson writes, through JSON.stringify. */
function orderAnswerGeneric(rm: ReadModel, o: OrderView, fills: readonly FillView[] | null, batch_id: number): string {
  const record = orderRecord(rm, o);
  if (fills !== null) record.fills = fills.map(immediateFill);
  record.batch_id = String(batch_id);
  return JSON.stringify(record);
}

/**
 * The answer of an accepted order, cancel or amend: exactly
 * `JSON.stringify({ ...orderRecord(rm, o), fills: fills.map(immediateFill), batch_id: String(batch_id) })`
 * (no `fills` member when `fills` is null), written as bytes into one reused buffer and read out
 * as one string (util/json_text.ts): no record object, no serializer walk and no chain of partial
 * strings per answer (issue 11: the front's per-request allocations). A name outside the tables
 * (a member JSON.stringify would drop) takes the generic path. test/gateway/views.test.ts compares
 * the two on generated orders.
 */
export function orderAnswerJson(rm: ReadModel, o: OrderView, fills: readonly FillView[] | null, batch_id: number): string {
  return writeOrderAnswer(answer_text.begin(), rm, o, fills, batch_id) ? answer_text.text() : orderAnswerGeneric(rm, o, fills, batch_id);
}

/**
 * The whole success body of that answer, `{"ok":true,"data":` + orderAnswerJson + `}`, as UTF-8
 * bytes: a view of the reused buffer, valid until the next answer is written (Answer.okBody hands
 * it to uWS at once). No string at all on the HTTP path: the answer string (~430 bytes) and the
 * flat copy of the enveloped text uWS made of it (~450) were ~0.9 KB of the front's ~10.1 KB of
 * garbage per request at max rate (sampled 2026-11-26).
 */
export function orderAnswerBody(rm: ReadModel, o: OrderView, fills: readonly FillView[] | null, batch_id: number): Uint8Array {
  const t = answer_text.begin().append(OK_PREFIX_BYTES);
  if (!writeOrderAnswer(t, rm, o, fills, batch_id)) {
    t.begin().raw(OK_BODY_PREFIX).raw(orderAnswerGeneric(rm, o, fills, batch_id));
  }
  return t.append(OK_SUFFIX_BYTES).view();
}

/**
 * The answer's run from `,"status":` to `,"price":` (status, market, side, type and time in
 * force), as bytes, per combination of them: written once, then copied (four strings and five
 * member names were ~30% of an answer's ~1.1 µs; issue 11). A handful of combinations per market.
 */
interface MiddleRun {
  market_id: string;
  bytes: Uint8Array;
}
const middle_runs = new Map<number, MiddleRun>();
/**
 * A bound on the cache's memory (a ~100-byte run per entry, ~0.4 MB full). A market has up to 80
 * combinations (5 statuses x 2 sides x 2 types x 4 times in force), so ~52 markets whose flow uses
 * every one of them fill it (limits.markets_max is 256). Past it an answer is still correct: its
 * middle run is written out in full each time (the ~30% of an answer's time the cache saves).
 */
const MIDDLE_RUNS_MAX = 4096;
const middle_text = new JsonText();

function writeMiddle(t: JsonText, status: string, market_id: string, side: string, type: string, tif: string): JsonText {
  return t.raw(',"status":').str(status).raw(',"market_id":').str(market_id)
    .raw(',"side":').str(side).raw(',"order_type":').str(type).raw(',"time_in_force":').str(tif).raw(',"price":');
}

/** The cached middle run of `o` (or null: not cacheable; the caller writes it out). */
function middleRun(o: OrderView, status: string, market_id: string, side: string, type: string, tif: string): Uint8Array | null {
  if (!(o.market >= 0 && o.market < 65_536 && o.status >= 0 && o.status < 16 && (o.side | 1) === 1 && (o.order_type | 1) === 1 && o.tif >= 0 && o.tif < 4)) return null;
  const key = ((((o.market * 16 + o.status) * 2 + o.side) * 2 + o.order_type) * 4) + o.tif;
  const run = middle_runs.get(key);
  if (run !== undefined && run.market_id === market_id) return run.bytes;
  if (middle_runs.size >= MIDDLE_RUNS_MAX) return null;
  const m = writeMiddle(middle_text.begin(), status, market_id, side, type, tif);
  if (!m.isAscii) return null;
  const bytes = Uint8Array.from(m.view());
  middle_runs.set(key, { market_id, bytes });
  return bytes;
}

/** The answer's member names and punctuation as bytes (copied; a string is read char by char). */
const ascii = asciiRun;
const A_ORDER_ID = ascii('{"order_id":');
const A_CLIENT_ORDER_ID = ascii(',"client_order_id":');
const A_QUANTITY = ascii(',"quantity":');
const A_FILLED = ascii(',"filled_quantity":');
const A_REMAINING = ascii(',"remaining_quantity":');
const A_LAST_FILL_PRICE = ascii(',"last_fill_price":');
const A_CREATED_AT = ascii(',"created_at":');
const A_UPDATED_AT = ascii(',"updated_at":');
const A_FILLS = ascii(',"fills":[');
const A_PRICE = ascii(',"price":');
const A_FEE = ascii(',"fee":');
const A_FILLS_END = ascii(']');
const A_BATCH_ID = ascii(',"batch_id":"');
const A_END = ascii('"}');
const A_FIRST_FILL = ascii('{"fill_id":');
const A_NEXT_FILL = ascii(',{"fill_id":');
const A_MAKER = ascii(',"is_maker":true}');
const A_TAKER = ascii(',"is_maker":false}');

/** Writes the answer's JSON into `t`; false (part written) when it must take the generic path. */
function writeOrderAnswer(t: JsonText, rm: ReadModel, o: OrderView, fills: readonly FillView[] | null, batch_id: number): boolean {
  const status = ORDER_STATUS_NAMES[o.status];
  const side = SIDE_NAMES[o.side];
  const type = ORDER_TYPE_NAMES[o.order_type];
  const tif = TIF_NAMES[o.tif];
  if (status === undefined || side === undefined || type === undefined || tif === undefined || !Number.isSafeInteger(batch_id)) {
    return false; // JSON.stringify drops such a member; String(NaN) is not num(NaN)
  }
  const market_id = rm.markets[o.market]?.id ?? '';
  t.append(A_ORDER_ID).num(o.order_id).append(A_CLIENT_ORDER_ID).str(o.client_order_id);
  const middle = middleRun(o, status, market_id, side, type, tif);
  if (middle !== null) t.append(middle);
  else writeMiddle(t, status, market_id, side, type, tif);
  t.num(o.price).append(A_QUANTITY).num(o.quantity).append(A_FILLED).num(o.filled)
    .append(A_REMAINING).num(o.remaining).append(A_LAST_FILL_PRICE).num(o.last_fill_price)
    .append(A_CREATED_AT).append(isoJsonBytes(o.created_ms)).append(A_UPDATED_AT).append(isoJsonBytes(o.updated_ms));
  if (fills !== null) {
    t.append(A_FILLS);
    for (let i = 0; i < fills.length; i++) {
      const f = fills[i];
      t.append(i === 0 ? A_FIRST_FILL : A_NEXT_FILL).num(f.fill_id).append(A_PRICE).num(f.price)
        .append(A_QUANTITY).num(f.quantity).append(A_FEE).num(f.fee).append(f.is_maker ? A_MAKER : A_TAKER);
    }
    t.append(A_FILLS_END);
  }
  t.append(A_BATCH_ID).num(batch_id).append(A_END);
  return true;
}

export function accountFill(rm: ReadModel, f: FillView): Record<string, unknown> {
  return {
    fill_id: f.fill_id,
    order_id: f.order_id,
    market_id: rm.markets[f.market]?.id ?? '',
    side: SIDE_NAMES[f.side],
    price: f.price,
    quantity: f.quantity,
    fee: f.fee,
    is_maker: f.is_maker,
    batch_id: String(f.batch_id),
    timestamp: isoTime(f.time_ms),
  };
}

export function publicTrade(rm: ReadModel, t: TradeView): Record<string, unknown> {
  return {
    trade_id: String(t.fill_id),
    market_id: rm.markets[t.market]?.id ?? '',
    price: String(t.price),
    quantity: String(t.quantity),
    side: SIDE_NAMES[t.taker_side],
    timestamp: isoTime(t.time_ms),
  };
}

export function marketRecord(rm: ReadModel, mv: MarketView): Record<string, unknown> {
  const book = rm.sortedBook(mv.index, 1);
  const bid = book.bids.length > 0 ? book.bids[0][0] : null;
  const ask = book.asks.length > 0 ? book.asks[0][0] : null;
  return {
    id: mv.id,
    base: mv.base,
    quote: mv.quote,
    status: mv.status,
    tick_size: mv.tick_size,
    lot_size: mv.lot_size,
    best_bid: bid === null ? null : formatUnits(bid),
    best_ask: ask === null ? null : formatUnits(ask),
    spread: bid === null || ask === null ? null : formatUnits(ask - bid),
    last_price: mv.mark_price > 0 ? formatUnits(mv.mark_price) : null,
  };
}

export function bookRecord(rm: ReadModel, mv: MarketView, depth: number): Record<string, unknown> {
  const book = rm.sortedBook(mv.index, depth);
  return {
    market_id: mv.id,
    sequence: mv.book_sequence,
    bids: book.bids.map(([p, q]) => [String(p), String(q)]),
    asks: book.asks.map(([p, q]) => [String(p), String(q)]),
  };
}

export function feesRecord(mv: MarketView): Record<string, unknown> {
  return { market_id: mv.id, maker_fee_bps: mv.maker_fee_bps, taker_fee_bps: mv.taker_fee_bps };
}

export function balancesRecord(rm: ReadModel, account: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const b = account >= 0 ? rm.balances.get(account) : undefined;
  rm.assets.forEach((symbol, i) => {
    out[symbol] = { available: b ? b[i * 2] : 0, locked: b ? b[i * 2 + 1] : 0 };
  });
  out.nonce_high_water = account >= 0 ? rm.nonce_high_water.get(account) ?? 0 : 0;
  out.envelope_nonce_high_water = account >= 0 ? rm.programmes.envelope_high_water.get(account) ?? 0 : 0;
  const credit = account >= 0 ? rm.credit.get(account) : undefined;
  if (credit === undefined) {
    out.credit = null;
  } else {
    const quoted = rm.quotedValue(account);
    out.credit = {
      credit_limit: credit.credit_limit,
      auto_cancel_ratio: ppmToRatio(credit.auto_cancel_ratio_ppm),
      quoted_value: quoted,
      // A display ratio, not money: the engine decides with exact integers.
      utilization: credit.credit_limit > 0 ? quoted / credit.credit_limit : 0,
    };
  }
  return out;
}
