// The leaderboard (GET /leaderboard): 30-day volume, PnL and trade count per address.
import { errorText, fill, h, table } from '../dom.js';
import { fmt, type Session } from '../session.js';

const LEADERBOARD_ROWS = 50;
/** Read again this often (GETs are limited per IP: rate_limits.gets_per_ip, 100 a minute by default). */
const LEADERBOARD_REFRESH_MS = 15_000;

interface Entry { rank: number; address: string; volume_usdc: string; pnl_usdc: string; trades: number }

export function leaderboardPage(root: HTMLElement, s: Session): () => void {
  const body = h('div', { class: 'panel', id: 'leaderboard' }, h('p', { class: 'muted' }, 'loading…'));
  fill(root, h('h2', {}, 'Leaderboard ', h('span', { class: 'muted' }, '30-day volume, USDC markets')), body);
  const load = (): void => {
    s.client.request<Entry[]>('GET', `/leaderboard?limit=${LEADERBOARD_ROWS}`).then((entries) => {
      fill(body, entries.length === 0 ? h('p', { class: 'muted' }, 'no trades in the window yet') : table(['Rank', 'Address', 'Volume (USDC)', 'PnL (USDC)', 'Trades'],
        entries.map((e) => h('tr', { 'data-address': e.address },
          h('td', {}, e.rank), h('td', {}, h('a', { href: `#/account/${e.address}` }, h('code', {}, e.address))),
          h('td', {}, fmt(e.volume_usdc)), h('td', { class: e.pnl_usdc.startsWith('-') ? 'ask' : 'bid' }, fmt(e.pnl_usdc)), h('td', {}, e.trades)))));
    }, (e: unknown) => fill(body, h('p', { class: 'status error' }, errorText(e))));
  };
  load();
  const timer = setInterval(load, LEADERBOARD_REFRESH_MS);
  return () => clearInterval(timer);
}
