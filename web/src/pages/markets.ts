// The markets: best bid and ask of each, kept live from the books the socket syncs (book_delta),
// the last trade price from the trades channel.
import type { BookView, Market } from '../../../src/client/index.js';
import { errorText, fill, h, table } from '../dom.js';
import { fmt, hold, MARKETS_LIVE_MAX, type Session } from '../session.js';

/** Markets beyond the live ones refresh over HTTP this often (GETs are limited per IP: 100 a minute by default). */
const MARKETS_REFRESH_MS = 15_000;

export function marketsPage(root: HTMLElement, s: Session): () => void {
  const cells = new Map<string, { bid: HTMLElement; ask: HTMLElement; spread: HTMLElement; last: HTMLElement; status: HTMLElement }>();
  const rows = s.markets.map((m) => {
    const c = {
      status: h('td', {}, m.status), bid: h('td', { class: 'bid' }, m.best_bid ?? '—'), ask: h('td', { class: 'ask' }, m.best_ask ?? '—'),
      spread: h('td', {}, m.spread ?? '—'), last: h('td', {}, m.last_price ?? '—'),
    };
    cells.set(m.id, c);
    return h('tr', { 'data-market': m.id }, h('td', {}, h('a', { href: `#/market/${m.id}` }, m.id)), c.status, c.bid, c.ask, c.spread, c.last);
  });
  const status = h('div', { class: 'status' });
  fill(root, h('h2', {}, 'Markets'),
    h('div', { class: 'panel' }, table(['Market', 'Status', 'Best bid', 'Best ask', 'Spread', 'Last'], rows, { id: 'markets' })), status);

  const showBook = (v: BookView): void => {
    const c = cells.get(v.market_id);
    if (c === undefined) return;
    const bid = v.bids[0]?.[0];
    const ask = v.asks[0]?.[0];
    c.bid.textContent = bid === undefined ? '—' : fmt(bid);
    c.ask.textContent = ask === undefined ? '—' : fmt(ask);
    c.spread.textContent = bid === undefined || ask === undefined ? '—' : fmt((BigInt(ask) - BigInt(bid)).toString());
  };
  const live = s.markets.slice(0, MARKETS_LIVE_MAX).map((m) => m.id);
  for (const id of live) {
    const v = s.socket.book(id);
    if (v !== undefined) showBook(v);
  }
  const offBook = s.socket.onBook(showBook);
  /** Markets with a trade seen on the socket since the page opened: newer than any HTTP answer. */
  const traded = new Set<string>();
  const offTrade = s.socket.onTrade((t) => {
    const c = cells.get(t.market_id);
    if (c === undefined) return;
    traded.add(t.market_id);
    c.last.textContent = fmt(t.price);
  });
  hold(s, live.flatMap((id) => [`book_delta:${id}`, `trades:${id}`])).catch((e: unknown) => {
    status.textContent = errorText(e);
  });
  // Each market's status and last price, and the books the socket does not follow (or not yet).
  const refresh = (): void => {
    s.client.markets().then((ms: Market[]) => {
      s.markets = ms;
      for (const m of ms) {
        const c = cells.get(m.id);
        if (c === undefined) continue;
        c.status.textContent = m.status;
        if (!traded.has(m.id)) c.last.textContent = m.last_price ?? '—';
        if (!live.includes(m.id) || s.socket.book(m.id) === undefined) {
          c.bid.textContent = m.best_bid ?? '—';
          c.ask.textContent = m.best_ask ?? '—';
          c.spread.textContent = m.spread ?? '—';
        }
      }
    }, (e: unknown) => {
      status.textContent = errorText(e);
    });
  };
  refresh();
  const timer = setInterval(refresh, MARKETS_REFRESH_MS);
  return () => {
    offBook();
    offTrade();
    clearInterval(timer);
  };
}
