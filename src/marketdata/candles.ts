// Candles (GET /ohlcv): built from committed trades by their batch time (LIVE) and, for an
// interval without a trade while the book was two-sided, from book midpoints (SIMULATED).
//
// Rules (docs/api.md, "GET /ohlcv/:market_id"):
// - Intervals are UTC-aligned: start = floor(time / length) x length (1d starts at 00:00 UTC).
// - A trade goes into the interval of its batch time. An interval with at least one trade is
//   LIVE: o/h/l/c from its trades in order, v = sum of base quantities. Mid samples taken in a
//   LIVE interval are ignored.
// - Mid samples: at the start of every committed batch (the mid the book had since the previous
//   batch, sampled at the new batch time) and at the end of every batch that changed the
//   market's book (the new mid, at the batch time). mid = floor((best_bid + best_ask) / 2), only
//   while both sides are non-empty. Intervals passed between two batches while the book was
//   two-sided get flat candles at that mid (the book cannot change between batches); a query
//   extends the same way up to the request time. A SIMULATED candle has o = first sample,
//   h = max, l = min, c = last sample, v = 0.
// - Memory: at least the last CANDLES_KEPT_PER_INTERVAL candles per market per interval, at most
//   twice that (trimmed in bulk).
// - Integers only: prices and volumes are units (x 1e6). A candle's volume is a safe integer in a
//   number while it fits, and what passes Number.MAX_SAFE_INTEGER moves to a bigint (v_over): a
//   fill added six bigints before (one per interval), ~120 instructions a request on the load
//   bench's flow (docs/benchmarks.md, h22m).

export const INTERVALS = {
  '1m': 60_000,
  '5m': 300_000,
  '15m': 900_000,
  '1h': 3_600_000,
  '4h': 14_400_000,
  '1d': 86_400_000,
} as const;

export type IntervalName = keyof typeof INTERVALS;
export const INTERVAL_NAMES = Object.keys(INTERVALS) as IntervalName[];
const LENGTHS: number[] = INTERVAL_NAMES.map((n) => INTERVALS[n]);

/** Candles kept per market per interval (the most a query can return is 500 too). */
export const CANDLES_KEPT_PER_INTERVAL = 500;

export interface Candle {
  start_ms: number;
  o: number;
  h: number;
  l: number;
  c: number;
  /** Base volume in units (0 for SIMULATED): v_over + v, v a safe integer (volumeOf). */
  v: number;
  /** The part of the volume moved out of `v` when a sum would have passed MAX_SAFE_INTEGER (0n until then). */
  v_over: bigint;
  live: boolean;
}

export interface CandleRecord {
  t: string;
  o: string;
  h: string;
  l: string;
  c: string;
  v: string;
  source: 'LIVE' | 'SIMULATED';
}

interface MarketCandles {
  /** One series per interval (index as INTERVAL_NAMES), oldest first. */
  series: Candle[][];
  /** The mid the book has now (0: not two-sided). */
  mid: number;
  /** Batch time the current mid was last sampled at (-1: never). */
  mid_sampled_ms: number;
}

/** A candle as a row: start, o, h, l, c, volume (decimal string), live (1/0). */
export type CandleRow = [number, number, number, number, number, string, number];
/** Per market (index): its series per interval as rows, its mid; null for a market never seen. */
export type CandlesState = ({ series: CandleRow[][]; mid: number; mid_sampled_ms: number } | null)[];

/** A candle's exact volume. */
export function volumeOf(c: Candle): bigint {
  return c.v_over + BigInt(c.v);
}

/** A volume as a candle holds it: { v, v_over } with v safe. */
function splitVolume(v: bigint): { v: number; v_over: bigint } {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) ? { v: Number(v), v_over: 0n } : { v: 0, v_over: v };
}

function volumeString(c: Candle): string {
  return c.v_over === 0n ? String(c.v) : volumeOf(c).toString();
}

function alignDown(ms: number, len: number): number {
  return Math.floor(ms / len) * len;
}

export function midpoint(best_bid: number, best_ask: number): number {
  return Math.floor((best_bid + best_ask) / 2);
}

export class CandleBuilder {
  private readonly markets: MarketCandles[] = [];
  private readonly kept: number;

  constructor(kept = CANDLES_KEPT_PER_INTERVAL) {
    this.kept = kept;
  }

  private market(m: number): MarketCandles {
    let mc = this.markets[m];
    if (mc === undefined) {
      mc = { series: LENGTHS.map(() => []), mid: 0, mid_sampled_ms: -1 };
      this.markets[m] = mc;
    }
    return mc;
  }

  /** Start of a committed batch: every market's standing mid is sampled at the batch time. */
  onBatchBegin(time_ms: number): void {
    for (let m = 0; m < this.markets.length; m++) {
      const mc = this.markets[m];
      if (mc !== undefined && mc.mid > 0) this.sampleMid(mc, time_ms);
    }
  }

  /** A committed trade at its batch time. */
  onTrade(m: number, time_ms: number, price: number, quantity: number): void {
    const mc = this.market(m);
    for (let i = 0; i < LENGTHS.length; i++) {
      const c = this.candleAt(mc.series[i], LENGTHS[i], time_ms);
      if (!c.live) {
        c.live = true;
        c.o = c.h = c.l = c.c = price;
        c.v = 0;
        c.v_over = 0n;
      } else {
        if (price > c.h) c.h = price;
        if (price < c.l) c.l = price;
        c.c = price;
      }
      // Both safe integers: an exact sum above MAX_SAFE_INTEGER rounds to >= 2^53, so the test is exact.
      const v = c.v + quantity;
      if (v <= Number.MAX_SAFE_INTEGER) {
        c.v = v;
      } else {
        c.v_over += BigInt(c.v) + BigInt(quantity);
        c.v = 0;
      }
    }
  }

  /** End of a committed batch that changed the market's book: `mid` 0 when not two-sided. */
  onBookMid(m: number, time_ms: number, mid: number): void {
    const mc = this.market(m);
    mc.mid = mid;
    if (mid > 0) this.sampleMid(mc, time_ms);
    else mc.mid_sampled_ms = -1;
  }

  /** Everything kept, in plain form (snapshots: src/snapshot/front_state.ts); volumes as strings. */
  exportState(): CandlesState {
    return this.markets.map((mc) => (mc === undefined ? null : {
      series: mc.series.map((series) => series.map((c) => [c.start_ms, c.o, c.h, c.l, c.c, volumeString(c), c.live ? 1 : 0] as CandleRow)),
      mid: mc.mid, mid_sampled_ms: mc.mid_sampled_ms,
    }));
  }

  /** Loads what `exportState` gave into an empty builder. */
  importState(state: CandlesState): void {
    state.forEach((mc, m) => {
      if (mc === null) return;
      this.markets[m] = {
        series: mc.series.map((rows) => rows.map(([start_ms, o, h, l, c, v, live]) => {
          const { v: units, v_over } = splitVolume(BigInt(v));
          // The fields in candleAt's order (one object shape for onTrade).
          return { start_ms, o, h, l, c, v: units, v_over, live: live === 1 };
        })),
        mid: mc.mid, mid_sampled_ms: mc.mid_sampled_ms,
      };
    });
  }

  /** The current mid of a market (0: not two-sided). */
  mid(m: number): number {
    return this.markets[m]?.mid ?? 0;
  }

  /**
   * Candles of `interval` whose interval ends after `since_ms`, oldest first, at most `limit`;
   * flat SIMULATED candles are added up to `now_ms` while the book stays two-sided.
   */
  query(m: number, interval: IntervalName, since_ms: number, limit: number, now_ms: number): CandleRecord[] {
    const mc = this.markets[m];
    if (mc === undefined || limit <= 0) return [];
    const i = INTERVAL_NAMES.indexOf(interval);
    const len = LENGTHS[i];
    const series = mc.series[i];
    const first_start = alignDown(since_ms, len);
    const out: CandleRecord[] = [];
    // Binary search for the first candle starting at or after first_start.
    let lo = 0;
    let hi = series.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (series[mid].start_ms < first_start) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < series.length && out.length < limit; k++) out.push(record(series[k]));
    // Virtual flat candles after the last sample, up to now (the book has not changed since).
    if (mc.mid > 0 && mc.mid_sampled_ms >= 0 && out.length < limit) {
      let start = alignDown(mc.mid_sampled_ms, len) + len;
      if (start < first_start) start = first_start;
      const end = alignDown(now_ms, len);
      for (; start <= end && out.length < limit; start += len) {
        out.push(record({ start_ms: start, o: mc.mid, h: mc.mid, l: mc.mid, c: mc.mid, v: 0, v_over: 0n, live: false }));
      }
    }
    return out;
  }

  /** Stored candles of one market and interval (tests, diagnostics). */
  stored(m: number, interval: IntervalName): readonly Candle[] {
    return this.markets[m]?.series[INTERVAL_NAMES.indexOf(interval)] ?? [];
  }

  /** Samples the standing mid at `time_ms`, filling the intervals passed since its last sample. */
  private sampleMid(mc: MarketCandles, time_ms: number): void {
    const mid = mc.mid;
    for (let i = 0; i < LENGTHS.length; i++) {
      const len = LENGTHS[i];
      const series = mc.series[i];
      if (mc.mid_sampled_ms >= 0) {
        const target = alignDown(time_ms, len);
        let start = alignDown(mc.mid_sampled_ms, len) + len;
        // Never more gap candles than are kept.
        if ((target - start) / len > this.kept) start = target - this.kept * len;
        for (; start < target; start += len) {
          const last = series[series.length - 1];
          if (last !== undefined && last.start_ms >= start) continue;
          this.push(series, { start_ms: start, o: mid, h: mid, l: mid, c: mid, v: 0, v_over: 0n, live: false });
        }
      }
      const c = this.candleAt(series, len, time_ms, mid);
      if (!c.live) {
        if (mid > c.h) c.h = mid;
        if (mid < c.l) c.l = mid;
        c.c = mid;
      }
    }
    mc.mid_sampled_ms = time_ms;
  }

  /**
   * The candle of the interval holding `time_ms` (created when missing: LIVE-less and opened at
   * `open`, or at 0 for a trade, which overwrites it). Batch times never go back; if one did,
   * the newest candle takes it.
   */
  private candleAt(series: Candle[], len: number, time_ms: number, open = 0): Candle {
    const start = alignDown(time_ms, len);
    const last = series[series.length - 1];
    if (last !== undefined && last.start_ms >= start) return last;
    const c: Candle = { start_ms: start, o: open, h: open, l: open, c: open, v: 0, v_over: 0n, live: false };
    this.push(series, c);
    return c;
  }

  private push(series: Candle[], c: Candle): void {
    series.push(c);
    if (series.length > this.kept * 2) series.splice(0, series.length - this.kept);
  }
}

function record(c: Candle): CandleRecord {
  return {
    t: new Date(c.start_ms).toISOString(),
    o: String(c.o),
    h: String(c.h),
    l: String(c.l),
    c: String(c.c),
    v: volumeString(c),
    source: c.live ? 'LIVE' : 'SIMULATED',
  };
}
