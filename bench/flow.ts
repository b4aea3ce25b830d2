// Order-flow generator for the matcher benchmark, in the style of exchange-core's test generator
// (ExchangeTestContainer / TestOrdersGenerator): a seeded PRNG, a fixed set of accounts that
// deposit up front, a book pre-filled to a target depth, then a measured mix of commands whose
// targets are orders that are really resting.
//
// How the flow is built: the generator drives a fast engine (src/engine/engine.ts) op by op with
// a tracking EventSink that keeps the set of live order ids (from orderUpdate events), their
// side, price and remaining quantity. Cancels and amends pick a live order, so they (nearly)
// always hit. Every request is recorded into typed-array columns (`Flow`). The benchmark then
// replays those columns into ONE reused Request object per op against fresh engines; the
// counts of this generating pass (`FlowStats.measured`) are what a faithful replay must give.
//
// The generating pass runs in a worker thread (`generateFlowInWorker`), so the engine code the
// timed runs execute has only ever seen the cheap counting sink (no polymorphic sink calls left
// behind in the JIT's feedback by the tracking sink).
import { Worker } from 'node:worker_threads';
import { Rng } from '../src/util/prng.js';
import type { EngineConfig, MatchingEngine } from '../src/engine/api.js';
import { createFastEngine } from '../src/engine/engine.js';
import { OrderStatus, OrderType, RequestKind, Side, Tif, emptyRequest, type Request } from '../src/engine/types.js';
import type { EventSink } from '../src/engine/events.js';

// ------------------------------------------------------------------------------ configuration

export const ASSET_ETH = 0;
export const ASSET_BTC = 1;
export const ASSET_USDC = 2;
export const MARKET_ETH_USDC = 0;
export const MARKET_BTC_USDC = 1;

/** The benchmark's engine configuration: the two spot markets, maker -1 bps / taker 5 bps. */
export function benchConfig(): EngineConfig {
  return {
    assets: ['ETH', 'BTC', 'USDC'],
    markets: [
      { id: 'ETH-USDC', base: ASSET_ETH, quote: ASSET_USDC, tick_size_units: 10_000, lot_size_units: 100 },
      { id: 'BTC-USDC', base: ASSET_BTC, quote: ASSET_USDC, tick_size_units: 100_000, lot_size_units: 10 },
    ],
    maker_fee_bps: -1,
    taker_fee_bps: 5,
    limits: {
      accounts_max: 4096,
      markets_max: 4,
      orders_open_max: 2_000_000,
      orders_open_per_account_max: 10_000,
      price_levels_per_book_max: 100_000,
    },
  };
}

const MARKETS = 2;
const TICK = [10_000, 100_000];
const LOT = [100, 10];
/** Order sizes are multiples of this (0.001 ETH, 0.0001 BTC), 1..SIZE_STEPS_MAX of them. */
const SIZE_UNIT = [1_000, 100];
const SIZE_STEPS_MAX = 200;
/** Starting mid: 3,000 USDC per ETH, 60,000 USDC per BTC (units of 1e-6). */
const MID_START = [3_000_000_000, 60_000_000_000];
/** Up-front deposit per account and asset: 1,000 ETH, 100 BTC, 1,000,000 USDC. */
const DEPOSIT_UNITS = [1_000_000_000, 100_000_000, 1_000_000_000_000];
/** Mean distance of a passive order from the mid, in ticks (exponential). */
const PASSIVE_OFFSET_MEAN_TICKS = 10;
const PASSIVE_OFFSET_MAX_TICKS = 400;

// Mix of measured operations, in per-mille.
const MIX_GTC = 90;
const MIX_IOC_FOK = 30;
const MIX_CANCEL = 60;
/** The rest (820) is amend: MIX_MOVE of it re-prices the order, the others change only the size. */
const MIX_MOVE_OF_AMEND = 0.73;

export interface FlowOptions {
  seed: number;
  accounts: number;
  /** Resting orders to pre-fill per market (half bids, half asks). */
  prefill_per_market: number;
  /** Measured operations. */
  ops: number;
}

export const FLOW_DEFAULTS: FlowOptions = {
  seed: 0x5eed_2026,
  accounts: 2_000,
  prefill_per_market: 1_000,
  ops: 1_000_000,
};

/** The recorded flow: one row per request, as columns. Rows [0, setup_end) are set-up. */
export interface Flow {
  length: number;
  setup_end: number;
  kind: Uint8Array;
  account: Int32Array;
  nonce: Float64Array;
  market: Int8Array;
  side: Uint8Array;
  order_type: Uint8Array;
  tif: Uint8Array;
  /** DEPOSIT: the asset. */
  asset: Uint8Array;
  price: Float64Array;
  /** PLACE / AMEND: quantity; DEPOSIT: amount. */
  quantity: Float64Array;
  /** CANCEL / AMEND: target order id (the request's order_id); PLACE: 0. */
  order_id: Float64Array;
  /** PLACE: the order id the engine assigned in the generating pass (for the peer's ids); else 0. */
  new_order_id: Float64Array;
}

export interface EventCounts {
  requests: number;
  accepted: number;
  rejected: number;
  fills: number;
  order_updates: number;
  balances: number;
}

export interface FlowMix {
  gtc: number;
  ioc_limit: number;
  fok_limit: number;
  market_ioc: number;
  market_fok: number;
  cancel: number;
  move: number;
  amend_size: number;
  /** Cancel/amend turned into a GTC place because the market had no live order. */
  substituted: number;
}

export interface FlowStats {
  options: FlowOptions;
  setup: EventCounts;
  measured: EventCounts;
  mix: FlowMix;
  /** Resting orders per market at the end of the flow, and min / max seen during it. */
  live_end: number[];
  live_min: number[];
  live_max: number[];
  /** Live orders per side at the end (market-major: [m0 bid, m0 ask, m1 bid, m1 ask]). */
  live_side_end: number[];
  mid_end: number[];
  /** Highest order id used: ids in [1, max_order_id]. */
  max_order_id: number;
  generate_ms: number;
}

// ------------------------------------------------------------------------------ replay helpers

/** Fills the one reused Request object with row `i` of the flow. No allocation. */
export function loadRequest(r: Request, f: Flow, i: number): void {
  r.kind = f.kind[i];
  r.account = f.account[i];
  r.nonce = f.nonce[i];
  r.market = f.market[i];
  r.side = f.side[i];
  r.order_type = f.order_type[i];
  r.tif = f.tif[i];
  r.price_units = f.price[i];
  r.quantity_units = f.quantity[i];
  r.amount_units = f.quantity[i];
  r.asset = f.asset[i];
  r.order_id = f.order_id[i];
}

/** The cheap sink for timed runs: counts events per kind, allocates nothing. */
export class CountingSink implements EventSink {
  accepted_n = 0;
  rejected_n = 0;
  fills = 0;
  order_updates = 0;
  balances = 0;

  accepted(): void {
    this.accepted_n++;
  }
  rejected(): void {
    this.rejected_n++;
  }
  fill(): void {
    this.fills++;
  }
  orderUpdate(): void {
    this.order_updates++;
  }
  balance(): void {
    this.balances++;
  }
  // The bench flows carry no referrals or forced inclusions.
  referral(): void {}
  referralShare(): void {}
  inboxQueued(): void {}
  inboxIncluded(): void {}
  agent(): void {}

  reset(): void {
    this.accepted_n = 0;
    this.rejected_n = 0;
    this.fills = 0;
    this.order_updates = 0;
    this.balances = 0;
  }

  counts(requests: number): EventCounts {
    return {
      requests, accepted: this.accepted_n, rejected: this.rejected_n, fills: this.fills,
      order_updates: this.order_updates, balances: this.balances,
    };
  }
}

// ------------------------------------------------------------------------------ live-order tracking

/**
 * Live (resting) orders, per market a dense list of ids for O(1) random pick and removal, plus
 * per side a count of orders at each price (in ticks) and the best price, so the generator knows
 * the top of the book exactly and can place passive orders that really are passive.
 */
class LiveOrders {
  readonly account: Int32Array;
  readonly market: Int8Array;
  readonly side: Uint8Array;
  readonly price: Float64Array;
  readonly remaining: Float64Array;
  /** Position of the id in its market's list, -1 when not live. */
  readonly pos: Int32Array;
  readonly list: Int32Array[];
  readonly count: number[];
  readonly side_count: number[];
  /** Per (market, side): price in ticks -> number of live orders there. */
  private readonly at_price: Map<number, number>[];
  /** Per (market, side): best price in ticks (bids: highest, asks: lowest); NaN when the side is empty. */
  private readonly best_ticks: number[];

  constructor(max_id: number, max_live: number) {
    this.account = new Int32Array(max_id + 1);
    this.market = new Int8Array(max_id + 1);
    this.side = new Uint8Array(max_id + 1);
    this.price = new Float64Array(max_id + 1);
    this.remaining = new Float64Array(max_id + 1);
    this.pos = new Int32Array(max_id + 1).fill(-1);
    this.list = [];
    this.count = [];
    this.side_count = [];
    this.at_price = [];
    this.best_ticks = [];
    for (let m = 0; m < MARKETS; m++) {
      this.list.push(new Int32Array(max_live));
      this.count.push(0);
      this.side_count.push(0, 0);
      this.at_price.push(new Map(), new Map());
      this.best_ticks.push(NaN, NaN);
    }
  }

  /** Best bid / ask price in units, or NaN when that side is empty. */
  best(market: number, side: number): number {
    return this.best_ticks[market * 2 + side] * TICK[market];
  }

  upsert(id: number, account: number, market: number, side: number, price: number, remaining: number): void {
    if (this.pos[id] < 0) {
      const n = this.count[market]++;
      this.list[market][n] = id;
      this.pos[id] = n;
      this.side_count[market * 2 + side]++;
      this.levelAdd(market, side, price);
    } else if (this.price[id] !== price) {
      this.levelRemove(market, side, this.price[id]);
      this.levelAdd(market, side, price);
    }
    this.account[id] = account;
    this.market[id] = market;
    this.side[id] = side;
    this.price[id] = price;
    this.remaining[id] = remaining;
  }

  remove(id: number): void {
    const p = this.pos[id];
    if (p < 0) return;
    const m = this.market[id];
    const last = --this.count[m];
    const moved = this.list[m][last];
    this.list[m][p] = moved;
    this.pos[moved] = p;
    this.pos[id] = -1;
    this.side_count[m * 2 + this.side[id]]--;
    this.levelRemove(m, this.side[id], this.price[id]);
  }

  private levelAdd(m: number, side: number, price: number): void {
    const k = m * 2 + side;
    const t = price / TICK[m];
    const levels = this.at_price[k];
    levels.set(t, (levels.get(t) ?? 0) + 1);
    const b = this.best_ticks[k];
    if (Number.isNaN(b) || (side === Side.BID ? t > b : t < b)) this.best_ticks[k] = t;
  }

  private levelRemove(m: number, side: number, price: number): void {
    const k = m * 2 + side;
    const t = price / TICK[m];
    const levels = this.at_price[k];
    const n = (levels.get(t) ?? 0) - 1;
    if (n > 0) {
      levels.set(t, n);
      return;
    }
    levels.delete(t);
    if (t !== this.best_ticks[k]) return;
    if (levels.size === 0) {
      this.best_ticks[k] = NaN;
      return;
    }
    // Walk away from the old best to the next occupied price; levels are dense near the top.
    const step = side === Side.BID ? -1 : 1;
    let next = t + step;
    for (let i = 0; i < 4096 && !levels.has(next); i++) next += step;
    if (!levels.has(next)) {
      next = side === Side.BID ? -Infinity : Infinity;
      for (const x of levels.keys()) if (side === Side.BID ? x > next : x < next) next = x;
    }
    this.best_ticks[k] = next;
  }
}

class TrackingSink implements EventSink {
  readonly counts: EventCounts = { requests: 0, accepted: 0, rejected: 0, fills: 0, order_updates: 0, balances: 0 };
  last_accepted_id = 0;
  last_rejected = false;

  constructor(private readonly live: LiveOrders) {}

  accepted(_kind: number, _account: number, order_id: number): void {
    this.counts.accepted++;
    this.last_accepted_id = order_id;
  }
  rejected(): void {
    this.counts.rejected++;
    this.last_rejected = true;
  }
  fill(): void {
    this.counts.fills++;
  }
  referral(): void {}
  referralShare(): void {}
  inboxQueued(): void {}
  inboxIncluded(): void {}
  agent(): void {}
  orderUpdate(
    order_id: number, account: number, market: number, side: number, status: number,
    price: number, _quantity: number, _filled: number, remaining: number,
  ): void {
    this.counts.order_updates++;
    if ((status === OrderStatus.OPEN || status === OrderStatus.PARTIALLY_FILLED) && remaining > 0) {
      this.live.upsert(order_id, account, market, side, price, remaining);
    } else {
      this.live.remove(order_id);
    }
  }
  balance(): void {
    this.counts.balances++;
  }
}

// ------------------------------------------------------------------------------ generator

/** An empty flow with room for `n` rows. */
export function allocFlow(n: number): Flow {
  return {
    length: 0,
    setup_end: 0,
    kind: new Uint8Array(n),
    account: new Int32Array(n),
    nonce: new Float64Array(n),
    market: new Int8Array(n),
    side: new Uint8Array(n),
    order_type: new Uint8Array(n),
    tif: new Uint8Array(n),
    asset: new Uint8Array(n),
    price: new Float64Array(n),
    quantity: new Float64Array(n),
    order_id: new Float64Array(n),
    new_order_id: new Float64Array(n),
  };
}

/** Appends `r` as the next row (`new_order_id`: the id a PLACE got, else 0). */
export function record(f: Flow, r: Request, new_order_id: number): void {
  const i = f.length++;
  f.kind[i] = r.kind;
  f.account[i] = r.account;
  f.nonce[i] = r.nonce;
  f.market[i] = r.market;
  f.side[i] = r.side;
  f.order_type[i] = r.order_type;
  f.tif[i] = r.tif;
  f.asset[i] = r.asset;
  f.price[i] = r.kind === RequestKind.DEPOSIT ? 0 : r.price_units;
  f.quantity[i] = r.kind === RequestKind.DEPOSIT ? r.amount_units : r.quantity_units;
  f.order_id[i] = r.order_id;
  f.new_order_id[i] = new_order_id;
}

function diffCounts(a: EventCounts, b: EventCounts): EventCounts {
  return {
    requests: a.requests - b.requests, accepted: a.accepted - b.accepted, rejected: a.rejected - b.rejected,
    fills: a.fills - b.fills, order_updates: a.order_updates - b.order_updates, balances: a.balances - b.balances,
  };
}

/**
 * Generates the flow by driving a fast engine (see the file comment). Deterministic in
 * `options`: the same options give the same flow, byte for byte.
 */
export function generateFlow(options: FlowOptions): { flow: Flow; stats: FlowStats } {
  const t0 = performance.now();
  const rng = new Rng(options.seed);
  const accounts = options.accounts;
  const setup_ops = accounts * 3 + options.prefill_per_market * MARKETS;
  const total = setup_ops + options.ops;
  const flow = allocFlow(total);
  const engine: MatchingEngine = createFastEngine(benchConfig());
  const live = new LiveOrders(total + 1, total + 1);
  const sink = new TrackingSink(live);
  const r = emptyRequest();
  const nonce = new Float64Array(accounts + 1);
  const mid = MID_START.slice();
  const mix: FlowMix = {
    gtc: 0, ioc_limit: 0, fok_limit: 0, market_ioc: 0, market_fok: 0, cancel: 0, move: 0, amend_size: 0,
    substituted: 0,
  };

  const clear = (): void => {
    r.kind = 0; r.account = 0; r.nonce = 0; r.market = 0; r.side = 0; r.order_type = 0; r.tif = 0;
    r.price_units = 0; r.quantity_units = 0; r.order_id = 0; r.client_order_id = ''; r.asset = 0;
    r.amount_units = 0;
  };
  const apply = (): void => {
    sink.counts.requests++;
    sink.last_accepted_id = 0;
    sink.last_rejected = false;
    engine.apply(r, sink);
    const new_id = r.kind === RequestKind.PLACE && !sink.last_rejected ? sink.last_accepted_id : 0;
    record(flow, r, new_id);
  };
  const size = (m: number): number => SIZE_UNIT[m] * (1 + rng.int(0, SIZE_STEPS_MAX - 1));
  const passiveTicks = (): number => 1 + Math.min(PASSIVE_OFFSET_MAX_TICKS, Math.floor(rng.expo(PASSIVE_OFFSET_MEAN_TICKS)));
  /** A resting price on `side`: below the mid for bids, above for asks. */
  const passivePrice = (m: number, side: number): number => {
    const k = passiveTicks();
    return side === Side.BID ? mid[m] - k * TICK[m] : mid[m] + k * TICK[m];
  };
  /** A marketable price: 0..`reach` ticks through the opposite best (the mid when that side is empty). */
  const aggressivePrice = (m: number, side: number, reach: number): number => {
    const k = rng.int(0, reach);
    const best = live.best(m, side === Side.BID ? Side.ASK : Side.BID);
    const from = Number.isNaN(best) ? mid[m] : best;
    return side === Side.BID ? from + k * TICK[m] : from - k * TICK[m];
  };
  const signed = (account: number): void => {
    r.account = account;
    r.nonce = ++nonce[account];
  };
  const target = options.prefill_per_market;
  /**
   * Share of GTC places and moves that cross (take): zero while the market holds fewer than
   * `target` resting orders, then rising with the excess, which holds the depth near `target`.
   */
  const aggressiveShare = (m: number): number => {
    const excess = (live.count[m] - target) / target;
    return excess <= 0 ? 0 : excess >= 0.3 ? 0.3 : excess;
  };
  /** Side for a new resting order: favours the thinner side so neither side empties. */
  const pickSide = (m: number): number => {
    const bids = live.side_count[m * 2];
    const asks = live.side_count[m * 2 + 1];
    let p_bid = 0.5 + (asks - bids) / (2 * Math.max(1, bids + asks)) * 2;
    if (p_bid < 0.15) p_bid = 0.15;
    if (p_bid > 0.85) p_bid = 0.85;
    return rng.float() < p_bid ? Side.BID : Side.ASK;
  };
  const placeGtc = (m: number): void => {
    clear();
    r.kind = RequestKind.PLACE;
    signed(1 + rng.int(0, accounts - 1));
    r.market = m;
    r.side = pickSide(m);
    r.order_type = OrderType.LIMIT;
    r.tif = Tif.GTC;
    r.price_units = rng.float() < aggressiveShare(m) ? aggressivePrice(m, r.side, 3) : passivePrice(m, r.side);
    r.quantity_units = size(m);
    apply();
  };

  // Set-up 1: every account deposits plenty of every asset.
  for (let a = 1; a <= accounts; a++) {
    for (let asset = 0; asset < 3; asset++) {
      clear();
      r.kind = RequestKind.DEPOSIT;
      r.account = a;
      r.market = -1;
      r.asset = asset;
      r.amount_units = DEPOSIT_UNITS[asset];
      apply();
    }
  }
  // Set-up 2: pre-fill each book with passive orders around the starting mid.
  for (let i = 0; i < options.prefill_per_market; i++) {
    for (let m = 0; m < MARKETS; m++) {
      clear();
      r.kind = RequestKind.PLACE;
      signed(1 + rng.int(0, accounts - 1));
      r.market = m;
      r.side = i % 2 === 0 ? Side.BID : Side.ASK;
      r.order_type = OrderType.LIMIT;
      r.tif = Tif.GTC;
      r.price_units = passivePrice(m, r.side);
      r.quantity_units = size(m);
      apply();
    }
  }
  flow.setup_end = flow.length;
  const setup_counts = { ...sink.counts };

  // Measured flow.
  const live_min = live.count.slice();
  const live_max = live.count.slice();
  for (let op = 0; op < options.ops; op++) {
    const m = rng.int(0, MARKETS - 1);
    // Random walk of the mid, kept inside the spread (between the best bid and the best ask), so
    // passive orders priced off it never cross and takers are exactly the orders meant to take.
    const u = rng.float();
    if (u < 0.2) mid[m] += TICK[m];
    else if (u < 0.4) mid[m] -= TICK[m];
    const best_bid = live.best(m, Side.BID);
    const best_ask = live.best(m, Side.ASK);
    if (!Number.isNaN(best_bid) && mid[m] < best_bid) mid[m] = best_bid;
    if (!Number.isNaN(best_ask) && mid[m] > best_ask) mid[m] = best_ask;
    if (mid[m] < 1_000 * TICK[m]) mid[m] = 1_000 * TICK[m];

    let pick = rng.int(0, 999);
    if (pick >= MIX_GTC + MIX_IOC_FOK && live.count[m] === 0) {
      mix.substituted++;
      pick = 0;
    }
    if (pick < MIX_GTC) {
      mix.gtc++;
      placeGtc(m);
    } else if (pick < MIX_GTC + MIX_IOC_FOK) {
      // Takers: half limit IOC, a quarter limit FOK, a quarter market orders (1/3 of those FOK).
      clear();
      r.kind = RequestKind.PLACE;
      signed(1 + rng.int(0, accounts - 1));
      r.market = m;
      r.side = rng.int(0, 1);
      // Taker size steers the depth too: smaller while the book is below its target.
      r.quantity_units = live.count[m] < target ? SIZE_UNIT[m] * (1 + rng.int(0, SIZE_STEPS_MAX / 4 - 1)) : size(m);
      const v = rng.float();
      if (v < 0.75) {
        r.order_type = OrderType.LIMIT;
        r.tif = v < 0.5 ? Tif.IOC : Tif.FOK;
        if (v < 0.5) mix.ioc_limit++;
        else mix.fok_limit++;
        r.price_units = aggressivePrice(m, r.side, 8);
      } else {
        r.order_type = OrderType.MARKET;
        r.tif = v < 0.9166 ? Tif.IOC : Tif.FOK;
        if (r.tif === Tif.IOC) mix.market_ioc++;
        else mix.market_fok++;
        r.price_units = 0;
      }
      apply();
    } else {
      const list = live.list[m];
      const id = list[rng.int(0, live.count[m] - 1)];
      const side = live.side[id];
      clear();
      signed(live.account[id]);
      r.market = m;
      r.order_id = id;
      if (pick < MIX_GTC + MIX_IOC_FOK + MIX_CANCEL) {
        mix.cancel++;
        r.kind = RequestKind.CANCEL;
      } else if (rng.float() < MIX_MOVE_OF_AMEND) {
        // Move: a new price near the mid on the order's side (sometimes crossing), and half the
        // time a new size too.
        mix.move++;
        r.kind = RequestKind.AMEND;
        let p = rng.float() < aggressiveShare(m) ? aggressivePrice(m, side, 3) : passivePrice(m, side);
        if (p === live.price[id]) p += side === Side.BID ? -TICK[m] : TICK[m];
        r.price_units = p;
        r.quantity_units = rng.float() < 0.5 ? live.remaining[id] : size(m);
      } else {
        // Size change at the same price: a reduction (keeps queue priority) or an increase.
        mix.amend_size++;
        r.kind = RequestKind.AMEND;
        r.price_units = live.price[id];
        const rem = live.remaining[id];
        const step = SIZE_UNIT[m] * (1 + rng.int(0, 19));
        let q = rng.float() < 0.5 ? rem - step : rem + step;
        if (q <= 0) q = rem > LOT[m] ? rem - LOT[m] : rem + SIZE_UNIT[m];
        r.quantity_units = q;
      }
      apply();
    }
    for (let k = 0; k < MARKETS; k++) {
      if (live.count[k] < live_min[k]) live_min[k] = live.count[k];
      if (live.count[k] > live_max[k]) live_max[k] = live.count[k];
    }
  }
  const measured = diffCounts(sink.counts, setup_counts);
  return {
    flow,
    stats: {
      options,
      setup: setup_counts,
      measured,
      mix,
      live_end: live.count.slice(),
      live_min,
      live_max,
      live_side_end: live.side_count.slice(),
      mid_end: mid.slice(),
      max_order_id: maxOrderId(flow),
      generate_ms: performance.now() - t0,
    },
  };
}

function maxOrderId(f: Flow): number {
  let a = 0;
  for (let i = 0; i < f.length; i++) {
    if (f.new_order_id[i] > a) a = f.new_order_id[i];
    if (f.order_id[i] > a) a = f.order_id[i];
  }
  return a;
}

/** The typed arrays of a flow, for transfer between threads. */
export function flowBuffers(f: Flow): ArrayBuffer[] {
  return [
    f.kind, f.account, f.nonce, f.market, f.side, f.order_type, f.tif, f.asset, f.price, f.quantity,
    f.order_id, f.new_order_id,
  ].map((a) => a.buffer as ArrayBuffer);
}

/** Runs `generateFlow` in a worker thread (bench/flow_worker.ts) and returns its result. */
export function generateFlowInWorker(options: FlowOptions): Promise<{ flow: Flow; stats: FlowStats }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./flow_worker.js', import.meta.url), { workerData: options });
    let done = false;
    worker.once('message', (msg: { flow: Flow; stats: FlowStats }) => {
      done = true;
      resolve(msg);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (!done) reject(new Error(`flow worker exited with code ${code} before answering`));
    });
  });
}
