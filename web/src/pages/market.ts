// One market: the live order book and depth chart (book_delta over the socket, checksummed by
// the SDK), candles (lightweight-charts over GET /ohlcv, redrawn on each trade), recent trades,
// and an order form signing with the development key, with that key's open orders to cancel.
import { parseDecimalUnits, type BookLevel, type BookView, type OrderRecord, type PublicTrade, type TradeMessage } from '../../../src/client/index.js';
import type { IntervalName } from '../../../src/marketdata/candles.js';
import { CandleChart, CHART_INTERVALS } from '../candle_chart.js';
import { drawDepth } from '../depth_chart.js';
import { debounce, errorText, fill, h, table } from '../dom.js';
import { fmt, hold, timeOf, type Session } from '../session.js';

/** Levels per side in the book table. */
const BOOK_ROWS = 15;
/** Trades listed. */
const TRADES_SHOWN = 30;
function bookRows(levels: readonly BookLevel[], side: 'bid' | 'ask'): HTMLTableRowElement[] {
  let total = 0n;
  return levels.slice(0, BOOK_ROWS).map(([p, q]) => {
    total += BigInt(q);
    return h('tr', { class: side, 'data-side': side, 'data-price': p, 'data-quantity': q },
      h('td', { class: 'px' }, fmt(p)), h('td', {}, fmt(q)), h('td', { class: 'muted' }, fmt(total.toString())));
  });
}

export function marketPage(root: HTMLElement, s: Session, market_id: string): () => void {
  const market = s.markets.find((m) => m.id === market_id);
  if (market === undefined) {
    fill(root, h('p', { class: 'status error' }, `no market ${market_id}`));
    return () => {};
  }
  const bookEl = h('div', { id: 'book' }, h('p', { class: 'muted' }, 'waiting for the book…'));
  const depth = h('canvas', { id: 'depth' });
  const candlesEl = h('div', { id: 'candles' });
  const legend = h('div', { id: 'candle-legend', class: 'muted' }, 'no candles yet');
  const intervalSel = h('select', { id: 'interval' }, ...CHART_INTERVALS.map((k) => h('option', { value: k }, k)));
  const tradesBody = h('tbody');
  const mine = h('div', { id: 'my-orders' });
  const status = h('div', { id: 'order-status', class: 'status' });
  const price = h('input', { id: 'order-price', name: 'price', inputmode: 'decimal', placeholder: `price (${market.quote})`, autocomplete: 'off' });
  const qty = h('input', { id: 'order-quantity', name: 'quantity', inputmode: 'decimal', placeholder: `quantity (${market.base})`, autocomplete: 'off' });
  const tif = h('select', { id: 'order-tif' }, h('option', { value: 'gtc' }, 'GTC'), h('option', { value: 'post_only' }, 'post only'), h('option', { value: 'ioc' }, 'IOC'));
  const form = h('form', { class: 'order', id: 'order-form' },
    h('label', { for: 'order-price' }, 'Price'), price,
    h('label', { for: 'order-quantity' }, 'Quantity'), qty,
    h('label', { for: 'order-tif' }, 'Time in force'), tif,
    h('span'), h('div', { class: 'sides' },
      h('button', { type: 'submit', class: 'bid', id: 'buy', value: 'bid' }, 'Buy'),
      h('button', { type: 'submit', class: 'ask', id: 'sell', value: 'ask' }, 'Sell')));
  fill(root,
    h('h2', {}, market.id, ' ', h('span', { class: 'muted' }, market.status)),
    h('div', { class: 'grid' },
      h('div', { class: 'panel' }, h('h3', {}, 'Order book'), bookEl),
      h('div', { class: 'panel' },
        h('h3', {}, 'Candles ', intervalSel), candlesEl, legend,
        h('h3', { style: 'margin-top:12px' }, 'Depth'), depth),
      h('div', { class: 'panel' },
        h('h3', {}, 'Place an order (development key)'), form, status,
        h('h3', { style: 'margin-top:12px' }, 'My open orders'), mine,
        h('h3', { style: 'margin-top:12px' }, 'Recent trades'),
        h('table', { id: 'trades' }, h('thead', {}, h('tr', {}, h('th', {}, 'Price'), h('th', {}, 'Quantity'), h('th', {}, 'Time'))), tradesBody))));

  let closed = false;

  // ---- book and depth
  const renderBook = (v: BookView): void => {
    const asks = bookRows(v.asks, 'ask').reverse();
    const bids = bookRows(v.bids, 'bid');
    const spread = v.bids.length > 0 && v.asks.length > 0 ? fmt((BigInt(v.asks[0][0]) - BigInt(v.bids[0][0])).toString()) : '—';
    fill(bookEl, table(['Price', 'Quantity', 'Total'], [...asks, h('tr', { class: 'spread' }, h('td', { colspan: 3 }, `spread ${spread}`)), ...bids]));
    bookEl.dataset.sequence = String(v.sequence);
    drawDepth(depth, v.bids, v.asks);
  };
  const held = s.socket.book(market.id);
  if (held !== undefined) renderBook(held);
  const offBook = s.socket.onBook((v) => {
    if (v.market_id !== market.id) return;
    renderBook(v);
  });

  // ---- candles
  const candles = new CandleChart(candlesEl, legend, s.client, market.id, (e) => showError(e));
  intervalSel.addEventListener('change', () => void candles.setInterval(intervalSel.value as IntervalName).catch(showError));

  // ---- trades
  const tradeRow = (t: PublicTrade | TradeMessage): HTMLTableRowElement =>
    h('tr', { class: t.side === 'bid' ? 'bid' : 'ask', 'data-trade-id': t.trade_id },
      h('td', { class: 'px' }, fmt(t.price)), h('td', {}, fmt(t.quantity)), h('td', { class: 'muted' }, timeOf(t.timestamp)));
  const seen = new Set<string>();
  const addTrade = (t: PublicTrade | TradeMessage, newest: boolean): void => {
    if (seen.has(t.trade_id)) return;
    seen.add(t.trade_id);
    if (newest) tradesBody.prepend(tradeRow(t));
    else tradesBody.append(tradeRow(t));
    while (tradesBody.rows.length > TRADES_SHOWN) tradesBody.deleteRow(-1);
  };
  const offTrade = s.socket.onTrade((t) => {
    if (t.market_id !== market.id) return;
    addTrade(t, true);
    candles.trade(t);
  });
  // The key's own orders change (placed, filled, cancelled): its order_update channel.
  const offOrder = s.socket.onOrder((o) => {
    if (o.market_id === market.id) refreshMine();
  });

  // ---- my orders
  const cancel = async (order_id: number): Promise<void> => {
    try {
      await s.trader.cancel({ order_id });
      setStatus(`order ${order_id} cancelled`, false);
    } catch (e) {
      setStatus(errorText(e), true);
    }
    refreshMine();
  };
  const renderMine = (orders: OrderRecord[]): void => {
    fill(mine, orders.length === 0 ? h('p', { class: 'muted' }, 'none') : table(['Side', 'Price', 'Open', ''], orders.map((o) =>
      h('tr', { 'data-order-id': o.order_id },
        h('td', { class: o.side }, o.side === 'bid' ? 'buy' : 'sell'), h('td', {}, fmt(o.price)), h('td', {}, fmt(o.remaining_quantity)),
        h('td', {}, h('button', { type: 'button', 'data-cancel': o.order_id, onclick: () => void cancel(o.order_id) }, 'Cancel'))))));
  };
  const refreshMine = debounce(() => {
    s.trader.orders({ market_id: market.id, status: 'open' }).then((o) => {
      if (!closed) renderMine(o);
    }, showError);
  }, 200);

  const setStatus = (text: string, error: boolean): void => {
    status.textContent = text;
    status.classList.toggle('error', error);
  };
  function showError(e: unknown): void {
    if (!closed) setStatus(errorText(e), true);
  }
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const side = ((ev as SubmitEvent).submitter as HTMLButtonElement | null)?.value === 'ask' ? 'ask' : 'bid';
    let price_units: number;
    let quantity_units: number;
    try {
      price_units = parseDecimalUnits(price.value.trim(), { allow_negative: false });
      quantity_units = parseDecimalUnits(qty.value.trim(), { allow_negative: false });
    } catch (e) {
      setStatus(errorText(e), true);
      return;
    }
    setStatus('signing and sending…', false);
    s.trader.placeOrder({
      market_id: market.id, side, price: price_units, quantity: quantity_units,
      time_in_force: tif.value as 'gtc' | 'ioc' | 'post_only',
    }).then((r) => {
      setStatus(`order ${r.order_id} ${r.status}`, false);
      status.dataset.orderId = String(r.order_id);
      refreshMine();
    }, (e: unknown) => setStatus(errorText(e), true));
  });

  void (async () => {
    try {
      await hold(s, [`book_delta:${market.id}`, `trades:${market.id}`]);
      const trades = await s.client.trades(market.id, { limit: TRADES_SHOWN });
      if (closed) return;
      for (const t of trades) addTrade(t, false);
      await candles.load();
      refreshMine();
    } catch (e) {
      showError(e);
    }
  })();

  return () => {
    closed = true;
    offBook();
    offTrade();
    offOrder();
    refreshMine.cancel();
    candles.destroy();
  };
}
