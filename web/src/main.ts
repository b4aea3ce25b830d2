// The Ringbook web view (docs/web.md): a hash router over four pages, the connection dot, the
// development key in the header and the socket's book-sync counters in the footer.
import { errorText, fill, h } from './dom.js';
import { accountPage } from './pages/account.js';
import { leaderboardPage } from './pages/leaderboard.js';
import { marketPage } from './pages/market.js';
import { marketsPage } from './pages/markets.js';
import { openSession, shortAddress, useKey, type Session } from './session.js';

const STATS_REFRESH_MS = 1_000;

function route(s: Session, root: HTMLElement): () => void {
  const parts = location.hash.replace(/^#\/?/, '').split('/').map((p) => decodeURIComponent(p));
  const page = parts[0] ?? '';
  for (const a of document.querySelectorAll<HTMLAnchorElement>('nav a')) {
    a.classList.toggle('active', a.dataset.nav === (page === 'market' || page === '' ? 'markets' : page));
  }
  document.body.dataset.page = page === '' ? 'markets' : page;
  switch (page) {
    case 'market': return marketPage(root, s, (parts[1] ?? '').toUpperCase());
    case 'leaderboard': return leaderboardPage(root, s);
    case 'account': return accountPage(root, s, parts[1] ?? '');
    default: return marketsPage(root, s);
  }
}

function renderKey(s: Session, el: HTMLElement): void {
  fill(el,
    h('span', { class: 'tag', title: 'A private key kept unencrypted in this browser (localStorage): for local testing only, never for real funds.' }, 'development key'),
    h('a', { href: `#/account/${s.wallet.address}`, id: 'key-address', 'data-address': s.wallet.address }, shortAddress(s.wallet.address)),
    h('button', { type: 'button', onclick: () => useKey() }, 'New key'),
    h('button', {
      type: 'button',
      onclick: () => {
        const k = prompt('Private key (0x + 64 hex). It stays in this browser only.');
        if (k === null) return;
        try {
          useKey(k.trim());
        } catch (e) {
          alert(errorText(e));
        }
      },
    }, 'Use a key'));
}

async function start(): Promise<void> {
  const root = document.getElementById('page')!;
  const conn = document.getElementById('conn')!;
  const stats = document.getElementById('stats')!;
  let s: Session;
  try {
    s = await openSession();
  } catch (e) {
    fill(root, h('p', { class: 'status error' }, `cannot reach the server: ${errorText(e)}`));
    return;
  }
  conn.dataset.state = s.socket.state;
  s.socket.onState((st) => {
    conn.dataset.state = st;
  });
  let leave = (): void => {};
  const show = (): void => {
    leave();
    leave = route(s, root);
  };
  renderKey(s, document.getElementById('key')!);
  window.addEventListener('hashchange', show);
  show();
  const st = s.socket.stats;
  const showStats = (): void => {
    stats.dataset.deltasApplied = String(st.deltas_applied);
    stats.dataset.checksumMismatches = String(st.checksum_mismatches);
    stats.textContent = `socket ${s.socket.state} · book deltas applied ${st.deltas_applied} · checksum mismatches ${st.checksum_mismatches} · re-syncs ${st.resyncs} · reconnects ${st.reconnects}`;
  };
  showStats();
  s.socket.onBook(showStats);
  setInterval(showStats, STATS_REFRESH_MS);
}

void start();
