// The candle chart of a market page (lightweight-charts). GET /ohlcv gives the candles when the
// page opens, when the interval changes and every CANDLES_RECONCILE_MS (the server's candles are
// the reference: they also hold the SIMULATED ones from book midpoints); between two loads each
// trade from the socket updates the last candle or opens the next one, following the server's rule
// (docs/api.md "GET /ohlcv": a trade goes into the UTC-aligned interval of its batch time, and an
// interval with trades takes o/h/l/c from them alone). That keeps the page within the GET budget
// (rate_limits.gets_per_ip, 100 a minute by default) however busy the market.
import { CandlestickSeries, createChart, type IChartApi, type ISeriesApi, type UTCTimestamp } from 'lightweight-charts';
import type { RingbookClient, TradeMessage } from '../../src/client/index.js';
import { INTERVALS, type IntervalName } from '../../src/marketdata/candles.js';
import { fill } from './dom.js';
import { chartValue, fmt } from './session.js';

/** Candles asked for (the most GET /ohlcv gives). */
const CANDLES_MAX = 500;
const CANDLES_RECONCILE_MS = 60_000;
/** The intervals offered (the longer ones need days of history to show anything). */
export const CHART_INTERVALS: IntervalName[] = ['1m', '5m', '15m', '1h'];

/** A candle as GET /ohlcv answers it: prices and volume in units, as strings. */
interface Candle { t: string; o: string; h: string; l: string; c: string; v: string; source: 'LIVE' | 'SIMULATED' }

export class CandleChart {
  readonly #box: HTMLElement;
  readonly #legend: HTMLElement;
  readonly #client: RingbookClient;
  readonly #market_id: string;
  readonly #chart: IChartApi;
  readonly #series: ISeriesApi<'Candlestick'>;
  readonly #timer: ReturnType<typeof setInterval>;
  #interval: IntervalName = '1m';
  #candles: Candle[] = [];
  /** Bumped by each load: a trade applied while a load is in flight makes that load's answer stale. */
  #generation = 0;
  #closed = false;

  constructor(box: HTMLElement, legend: HTMLElement, client: RingbookClient, market_id: string, onError: (e: unknown) => void) {
    this.#box = box;
    this.#legend = legend;
    this.#client = client;
    this.#market_id = market_id;
    this.#chart = createChart(box, {
      autoSize: true,
      layout: { background: { color: '#171e26' }, textColor: '#d8dee6', attributionLogo: false },
      grid: { vertLines: { color: '#1f2833' }, horzLines: { color: '#1f2833' } },
      timeScale: { timeVisible: true, secondsVisible: false, barSpacing: 12, rightOffset: 4 },
    });
    this.#series = this.#chart.addSeries(CandlestickSeries, {
      upColor: '#26a69a', downColor: '#ef5350', wickUpColor: '#26a69a', wickDownColor: '#ef5350', borderVisible: false,
      // Only the candles are drawn in the candle colours in the pane (the browser test counts them).
      priceLineVisible: false,
    });
    this.#timer = setInterval(() => void this.load().catch(onError), CANDLES_RECONCILE_MS);
  }

  async setInterval(name: IntervalName): Promise<void> {
    this.#interval = name;
    await this.load();
  }

  /**
   * Loads the candles. A trade that arrives while the answer is on its way may or may not be in
   * it: that answer is dropped and the load tried once more; a second such answer is taken as it
   * is (off by those trades at most until the next load).
   */
  async load(retry = true): Promise<void> {
    const generation = ++this.#generation;
    const length = INTERVALS[this.#interval];
    const since = new Date(Date.now() - CANDLES_MAX * length).toISOString();
    const candles = await this.#client.request<Candle[]>('GET',
      `/ohlcv/${encodeURIComponent(this.#market_id)}?interval=${this.#interval}&limit=${CANDLES_MAX}&since=${since}`);
    if (this.#closed) return;
    if (generation !== this.#generation && retry) return this.load(false);
    this.#candles = candles;
    this.#series.setData(candles.map((c) => this.#bar(c)));
    this.#show();
  }

  /** A trade of this market from the socket. */
  trade(t: TradeMessage): void {
    this.#generation++; // a load already in flight may predate this trade: its answer is dropped
    const length = INTERVALS[this.#interval];
    const ms = Date.parse(t.timestamp);
    const start = new Date(Math.floor(ms / length) * length).toISOString();
    const last = this.#candles[this.#candles.length - 1];
    if (last !== undefined && Date.parse(last.t) > Date.parse(start)) return; // older than the chart's last candle
    let c: Candle;
    if (last !== undefined && last.t === start && last.source === 'LIVE') {
      c = last;
      if (BigInt(t.price) > BigInt(c.h)) c.h = t.price;
      if (BigInt(t.price) < BigInt(c.l)) c.l = t.price;
      c.c = t.price;
      c.v = (BigInt(c.v) + BigInt(t.quantity)).toString();
    } else {
      c = { t: start, o: t.price, h: t.price, l: t.price, c: t.price, v: t.quantity, source: 'LIVE' };
      if (last !== undefined && last.t === start) this.#candles[this.#candles.length - 1] = c; // a SIMULATED one gives way
      else this.#candles.push(c);
    }
    this.#series.update(this.#bar(c));
    this.#show();
  }

  destroy(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#chart.remove();
  }

  #bar(c: Candle): { time: UTCTimestamp; open: number; high: number; low: number; close: number } {
    return { time: (Date.parse(c.t) / 1000) as UTCTimestamp, open: chartValue(c.o), high: chartValue(c.h), low: chartValue(c.l), close: chartValue(c.c) };
  }

  #show(): void {
    const candles = this.#candles;
    const live = candles.filter((c) => c.source === 'LIVE').length;
    this.#box.dataset.candles = String(candles.length);
    this.#box.dataset.liveCandles = String(live);
    const last = candles[candles.length - 1];
    if (last === undefined) {
      fill(this.#legend, 'no candles yet');
      return;
    }
    this.#box.dataset.lastClose = last.c;
    fill(this.#legend, `${this.#interval} · ${candles.length} candles (${live} with trades) · last O ${fmt(last.o)} H ${fmt(last.h)} L ${fmt(last.l)} C ${fmt(last.c)} V ${fmt(last.v)}`);
  }
}
