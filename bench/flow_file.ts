// The recorded bench flow as a file, so the JS bench and the C reference (native-bench/
// matcher_book.c) replay the same bytes. Little-endian, version 1:
//
//   "RBFLOW01" (8 bytes), u32 version = 1, u32 length, u32 setup_end,
//   i32 maker_fee_bps, i32 taker_fee_bps, u32 asset_count, u32 market_count,
//   u32 accounts_max, markets_max, orders_open_max, orders_open_per_account_max,
//       price_levels_per_book_max,
//   asset_count x 16 bytes: the asset symbol, ASCII, NUL-padded,
//   market_count x (i32 base, i32 quote, f64 tick_size_units, f64 lot_size_units),
//   then the columns of `Flow` in this order, each starting at an 8-byte boundary:
//   kind u8, account i32, nonce f64, market i8, side u8, order_type u8, tif u8, asset u8,
//   price f64, quantity f64, order_id f64, new_order_id f64.
//
// Markets are listed in index order with ids BASE-QUOTE, as the engine builds them.
import { readFileSync, writeFileSync } from 'node:fs';
import type { EngineConfig } from '../src/engine/api.js';
import type { Flow } from './flow.js';

const MAGIC = 'RBFLOW01';
const VERSION = 1;
const SYMBOL_BYTES = 16;
const MARKET_BYTES = 24;
/** u32/i32 fields after the magic: version .. price_levels_per_book_max. */
const HEADER_WORDS = 13;

type Column = Uint8Array | Int8Array | Int32Array | Float64Array;

function columns(f: Flow): Column[] {
  return [f.kind, f.account, f.nonce, f.market, f.side, f.order_type, f.tif, f.asset, f.price, f.quantity, f.order_id, f.new_order_id];
}

const align8 = (n: number): number => (n + 7) & ~7;

/** Writes rows [0, f.length) of the flow with the engine configuration it was made for. */
export function writeFlowFile(path: string, f: Flow, config: EngineConfig): void {
  const assets = config.assets;
  for (const a of assets) {
    if (!/^[\x21-\x7e]{1,16}$/.test(a)) throw new Error(`asset symbol ${JSON.stringify(a)} does not fit the flow file`);
  }
  config.markets.forEach((m, i) => {
    if (m.id !== `${assets[m.base]}-${assets[m.quote]}`) throw new Error(`market ${i} id ${m.id} is not BASE-QUOTE`);
  });
  const n = f.length;
  let size = align8(8 + HEADER_WORDS * 4 + assets.length * SYMBOL_BYTES + config.markets.length * MARKET_BYTES);
  for (const c of columns(f)) size = align8(size + n * c.BYTES_PER_ELEMENT);
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  bytes.set(Buffer.from(MAGIC, 'ascii'), 0);
  let at = 8;
  const u32 = (v: number): void => {
    view.setUint32(at, v, true);
    at += 4;
  };
  const i32 = (v: number): void => {
    view.setInt32(at, v, true);
    at += 4;
  };
  const l = config.limits;
  u32(VERSION);
  u32(n);
  u32(f.setup_end);
  i32(config.maker_fee_bps);
  i32(config.taker_fee_bps);
  u32(assets.length);
  u32(config.markets.length);
  u32(l.accounts_max);
  u32(l.markets_max);
  u32(l.orders_open_max);
  u32(l.orders_open_per_account_max);
  u32(l.price_levels_per_book_max);
  for (const a of assets) {
    bytes.set(Buffer.from(a, 'ascii'), at);
    at += SYMBOL_BYTES;
  }
  for (const m of config.markets) {
    i32(m.base);
    i32(m.quote);
    view.setFloat64(at, m.tick_size_units, true);
    view.setFloat64(at + 8, m.lot_size_units, true);
    at += 16;
  }
  for (const c of columns(f)) {
    at = align8(at);
    bytes.set(new Uint8Array(c.buffer, c.byteOffset, n * c.BYTES_PER_ELEMENT), at);
    at += n * c.BYTES_PER_ELEMENT;
  }
  writeFileSync(path, bytes);
}

/** Reads a flow file back: the flow (columns copied out of the file) and its configuration. */
export function readFlowFile(path: string): { flow: Flow; config: EngineConfig } {
  const file = readFileSync(path);
  const bytes = new Uint8Array(file.buffer, file.byteOffset, file.byteLength);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (Buffer.from(bytes.subarray(0, 8)).toString('ascii') !== MAGIC) throw new Error(`${path}: not a flow file`);
  let at = 8;
  const need = (k: number): void => {
    if (at + k > bytes.length) throw new Error(`${path}: truncated at byte ${at}`);
  };
  const u32 = (): number => {
    need(4);
    const v = view.getUint32(at, true);
    at += 4;
    return v;
  };
  const i32 = (): number => {
    need(4);
    const v = view.getInt32(at, true);
    at += 4;
    return v;
  };
  if (u32() !== VERSION) throw new Error(`${path}: flow file version is not ${VERSION}`);
  const n = u32();
  const setup_end = u32();
  const maker_fee_bps = i32();
  const taker_fee_bps = i32();
  const asset_count = u32();
  const market_count = u32();
  const limits = {
    accounts_max: u32(), markets_max: u32(), orders_open_max: u32(), orders_open_per_account_max: u32(),
    price_levels_per_book_max: u32(),
  };
  if (setup_end > n) throw new Error(`${path}: set-up longer than the flow`);
  const assets: string[] = [];
  for (let i = 0; i < asset_count; i++) {
    need(SYMBOL_BYTES);
    const raw = bytes.subarray(at, at + SYMBOL_BYTES);
    const end = raw.indexOf(0);
    assets.push(Buffer.from(raw.subarray(0, end < 0 ? SYMBOL_BYTES : end)).toString('ascii'));
    at += SYMBOL_BYTES;
  }
  const markets: EngineConfig['markets'] = [];
  for (let i = 0; i < market_count; i++) {
    const base = i32();
    const quote = i32();
    need(16);
    const tick = view.getFloat64(at, true);
    const lot = view.getFloat64(at + 8, true);
    at += 16;
    markets.push({ id: `${assets[base]}-${assets[quote]}`, base, quote, tick_size_units: tick, lot_size_units: lot });
  }
  const column = <T extends Column>(make: new (buffer: ArrayBuffer) => T, width: number): T => {
    at = align8(at);
    need(n * width);
    const copy = new Uint8Array(n * width);
    copy.set(bytes.subarray(at, at + n * width));
    at += n * width;
    return new make(copy.buffer);
  };
  const flow: Flow = {
    length: n,
    setup_end,
    kind: column(Uint8Array, 1),
    account: column(Int32Array, 4),
    nonce: column(Float64Array, 8),
    market: column(Int8Array, 1),
    side: column(Uint8Array, 1),
    order_type: column(Uint8Array, 1),
    tif: column(Uint8Array, 1),
    asset: column(Uint8Array, 1),
    price: column(Float64Array, 8),
    quantity: column(Float64Array, 8),
    order_id: column(Float64Array, 8),
    new_order_id: column(Float64Array, 8),
  };
  return { flow, config: { assets, markets, maker_fee_bps, taker_fee_bps, limits } };
}
