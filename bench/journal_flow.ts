// The journaled order flow of bench/recovery.ts and bench/state_root.ts: deposits, then places
// and cancels from many accounts, written to a real Journal in batches.
import { emptyRequest, OrderType, RequestKind, Side, Tif } from '../src/engine/types.js';
import { Journal } from '../src/journal/journal.js';
import { createRecordRing, RECORD_WORDS } from '../src/ring/records.js';
import { RequestWriter } from '../src/ring/request_records.js';
import { mulberry32 as rng } from '../src/util/prng.js';

/** A non-negative integer from the environment (underscores allowed), or `fallback`. */
export function envInt(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v.replace(/_/g, ''));
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number`);
  return Math.floor(n);
}

/** A deterministic 20-byte address for account i. */
export function address(i: number): Uint8Array {
  const a = new Uint8Array(20);
  new DataView(a.buffer).setUint32(16, i);
  a[0] = 0xab;
  return a;
}

export interface JournalFlow {
  accounts: number;
  requests: number;
  /** Requests per journal batch. */
  batch: number;
}

/**
 * Writes a durable journal at `dir`: three deposits for each of `accounts` accounts, then
 * `requests` requests: 75% PLACE (limit GTC, random side, price within +-20 ticks of a fixed mid,
 * 1-10 lots, 80% ETH-USDC / 20% BTC-USDC, a client order id) and 25% CANCEL (by the client id of
 * one of the account's recent orders), in batches of `batch` (each append durable before the next,
 * as the matcher writes them).
 * `first_request_batch` is the first batch holding requests after the deposits.
 */
export async function generateJournal(dir: string, flow: JournalFlow): Promise<{ batches: number; records: number; seconds: number; first_request_batch: number }> {
  const { accounts: ACCOUNTS, requests: REQUESTS, batch: BATCH } = flow;
  const t0 = performance.now();
  const journal = Journal.open(dir);
  const ring_slots = 1 << Math.ceil(Math.log2(Math.max(2, BATCH)));
  const ring = createRecordRing(ring_slots);
  const writer = new RequestWriter(ring);
  const batch = new Int32Array(BATCH * RECORD_WORDS);
  const r = emptyRequest();
  const rand = rng(42);
  const nonce = new Float64Array(ACCOUNTS + 1);
  const placed = new Uint32Array(ACCOUNTS + 1);
  let batch_id = 0;
  let pending = 0;
  let records = 0;
  let seq = 0;
  const flush = (): void => {
    writer.flush();
    const n = ring.available();
    if (n === 0) return;
    for (let i = 0; i < n; i++) {
      const o = ring.slotOffset(i);
      batch.set(ring.i32.subarray(o, o + RECORD_WORDS), i * RECORD_WORDS);
    }
    ring.release(n);
    journal.append(++batch_id, 1_700_000_000_000 + batch_id, batch, n);
    records += n;
    pending = 0;
  };
  const push = (account: number): void => {
    if (!writer.tryWrite(++seq, address(account), account, r)) throw new Error('ring full');
    if (++pending === BATCH) flush();
  };
  // Deposits: accounts 1..ACCOUNTS in order (the registry hands out ids in that order).
  for (let a = 1; a <= ACCOUNTS; a++) {
    for (const [asset, amount] of [[0, 1e9], [1, 1e8], [2, 1e11]] as const) {
      Object.assign(r, emptyRequest(), { kind: RequestKind.DEPOSIT, asset, amount_units: amount });
      push(a);
    }
  }
  // The batch being filled (the last deposits may share it with the first requests).
  const first_request_batch = batch_id + 1;
  for (let i = 0; i < REQUESTS; i++) {
    const a = 1 + Math.floor(rand() * ACCOUNTS);
    Object.assign(r, emptyRequest());
    r.nonce = ++nonce[a];
    if (rand() < 0.25 && placed[a] > 0) {
      r.kind = RequestKind.CANCEL;
      const back = Math.floor(rand() * Math.min(placed[a], 8));
      r.client_order_id = `c${placed[a] - back}`;
    } else {
      const btc = rand() < 0.2;
      r.kind = RequestKind.PLACE;
      r.market = btc ? 1 : 0;
      r.side = rand() < 0.5 ? Side.BID : Side.ASK;
      r.order_type = OrderType.LIMIT;
      r.tif = Tif.GTC;
      const tick = btc ? 100_000 : 10_000;
      const mid_ticks = btc ? 300_000 : 200_000;
      r.price_units = (mid_ticks + Math.floor(rand() * 41) - 20) * tick;
      r.quantity_units = (btc ? 10 : 100) * (1 + Math.floor(rand() * 10));
      r.client_order_id = `c${++placed[a]}`;
    }
    push(a);
  }
  flush();
  await journal.close();
  return { batches: batch_id, records, seconds: (performance.now() - t0) / 1000, first_request_batch };
}
