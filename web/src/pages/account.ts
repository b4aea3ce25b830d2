// An account, by an address typed in: balances, open orders (cancellable when the address is the
// development key's), recent fills and referral stats, refreshed every few seconds.
import { isAddress } from '../../../src/util/address.js';
import { debounce, errorText, fill, h, table } from '../dom.js';
import { fmt, timeOf, type Session } from '../session.js';

/**
 * Another address is read again this often (four GETs: 16 a minute of the 100 that
 * rate_limits.gets_per_ip allows per IP by default); the development key's own account follows its
 * order, fill and balance messages on the socket and is read again only after them.
 */
const ACCOUNT_REFRESH_MS = 15_000;
const OWN_ACCOUNT_REFRESH_MS = 60_000;
const FILLS_SHOWN = 50;

export function accountPage(root: HTMLElement, s: Session, address: string): () => void {
  const input = h('input', { id: 'address', name: 'address', placeholder: '0x… address', value: address || s.wallet.address, spellcheck: 'false', autocomplete: 'off' });
  const form = h('form', { class: 'account-form', id: 'account-form' }, input, h('button', { type: 'submit' }, 'Show'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    location.hash = `#/account/${input.value.trim()}`;
  });
  if (address === '') {
    fill(root, h('h2', {}, 'Account'), form, h('p', { class: 'muted' }, 'Type an address (your development key\'s is filled in).'));
    return () => {};
  }
  const shown = address.slice(0, 60);
  if (!isAddress(address)) {
    fill(root, h('h2', {}, 'Account'), form, h('p', { class: 'status error' }, `not an address: ${shown}`));
    return () => {};
  }
  const own = address.toLowerCase() === s.wallet.address;
  const balances = h('div', { id: 'balances' });
  const orders = h('div', { id: 'orders' });
  const fills = h('div', { id: 'fills' });
  const referral = h('div', { id: 'referral' });
  const status = h('div', { class: 'status' });
  fill(root, h('h2', {}, 'Account ', h('code', {}, address), own ? h('span', { class: 'muted' }, ' (your development key)') : null), form, status,
    own ? h('p', { class: 'muted', id: 'fund-hint' }, 'Fund it on a local server: ', h('code', {}, `curl -X POST ${location.origin}/deposit -H "X-Admin-Token: $(cat data/admin_token)" -H 'Content-Type: application/json' -d '{"user":"${address}","asset":"USDC","amount":"10000"}'`)) : null,
    h('div', { class: 'cols' },
      h('div', { class: 'panel' }, h('h3', {}, 'Balances'), balances),
      h('div', { class: 'panel' }, h('h3', {}, 'Referrals'), referral)),
    h('div', { class: 'cols' },
      h('div', { class: 'panel' }, h('h3', {}, 'Open orders'), orders),
      h('div', { class: 'panel' }, h('h3', {}, 'Fills'), fills)));

  let closed = false;
  const load = async (): Promise<void> => {
    const [b, o, f, r] = await Promise.all([
      s.client.balances(address), s.client.orders({ address, status: 'open' }), s.client.fills({ address, limit: FILLS_SHOWN }),
      s.client.referral(address),
    ]);
    if (closed) return;
    const assets = Object.entries(b.assets);
    fill(balances, assets.length === 0 ? h('p', { class: 'muted' }, 'no balances') : table(['Asset', 'Available', 'Locked'],
      assets.map(([asset, v]) => h('tr', { 'data-asset': asset }, h('td', {}, asset), h('td', {}, fmt(v.available)), h('td', {}, fmt(v.locked))))));
    fill(orders, o.length === 0 ? h('p', { class: 'muted' }, 'none') : table(['Market', 'Side', 'Price', 'Open', 'Filled', ''],
      o.map((x) => h('tr', { 'data-order-id': x.order_id },
        h('td', {}, x.market_id), h('td', { class: x.side }, x.side === 'bid' ? 'buy' : 'sell'), h('td', {}, fmt(x.price)),
        h('td', {}, fmt(x.remaining_quantity)), h('td', {}, fmt(x.filled_quantity)),
        h('td', {}, own ? h('button', { type: 'button', 'data-cancel': x.order_id, onclick: () => void cancel(x.order_id) }, 'Cancel') : '')))));
    fill(fills, f.length === 0 ? h('p', { class: 'muted' }, 'none') : table(['Time', 'Market', 'Side', 'Price', 'Quantity', 'Fee', 'Role'],
      f.map((x) => h('tr', { 'data-fill-id': x.fill_id, 'data-price': x.price, 'data-quantity': x.quantity },
        h('td', {}, timeOf(x.timestamp)), h('td', {}, x.market_id), h('td', { class: x.side }, x.side === 'bid' ? 'buy' : 'sell'),
        h('td', {}, fmt(x.price)), h('td', {}, fmt(x.quantity)), h('td', {}, fmt(x.fee)), h('td', {}, x.is_maker ? 'maker' : 'taker')))));
    fill(referral, h('table', {}, h('tbody', {},
      h('tr', {}, h('td', {}, 'Referred users'), h('td', {}, r.referred_users)),
      h('tr', {}, h('td', {}, 'Active referrals'), h('td', {}, r.active_referral_count)),
      h('tr', {}, h('td', {}, 'Earnings (USDC)'), h('td', {}, fmt(r.total_earnings_usdc))),
      h('tr', {}, h('td', {}, 'Referred by'), h('td', {}, r.referred_by === null ? '—' : h('code', {}, r.referred_by.referrer))))));
  };
  const cancel = async (order_id: number): Promise<void> => {
    try {
      await s.trader.cancel({ order_id });
      status.textContent = `order ${order_id} cancelled`;
      status.classList.remove('error');
    } catch (e) {
      status.textContent = errorText(e);
      status.classList.add('error');
    }
    await refresh();
  };
  const refresh = (): Promise<void> => load().catch((e: unknown) => {
    if (closed) return;
    status.textContent = errorText(e);
    status.classList.add('error');
  });
  void refresh();
  const timer = setInterval(() => void refresh(), own ? OWN_ACCOUNT_REFRESH_MS : ACCOUNT_REFRESH_MS);
  const soon = debounce(() => void refresh(), 250);
  const offs = own ? [s.socket.onOrder(soon), s.socket.onFill(soon), s.socket.onBalance(soon)] : [];
  return () => {
    closed = true;
    clearInterval(timer);
    soon.cancel();
    for (const off of offs) off();
  };
}
