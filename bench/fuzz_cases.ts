// The hostile inputs of the fuzzer (bench/fuzz.ts): valid signed bodies of every route and
// WebSocket message, then mutated (fields dropped, retyped, huge, unicode, another user's
// address), raw-text damage (truncated, flipped bytes, duplicate keys, deep nesting, oversized),
// bad query strings and methods. Every draw comes from the seeded Rng: a failure is replayable.
import { Rng } from '../src/util/prng.js';
import type { Wallet } from '../test/server/harness.js';
import { fastSigner } from '../test/ws/client.js';

/** One HTTP request to send on its own connection. */
export interface HttpCase {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | null;
  /** What produced it (for failure reports and the statistics). */
  kind: string;
  /** False for requests uWS closes unanswered by design (docs/api.md "Connections"). */
  expect_answer: boolean;
}

export interface FuzzWorld {
  /** Wallets of the attacker: their signatures are valid. */
  attackers: Wallet[];
  /** Accounts that must never change: their addresses appear in attacks, never their keys. */
  victims: string[];
  admin_token: string;
  markets: string[];
}

/** Values of the wrong type, at the edges, or hostile as text. */
const HOSTILE_VALUES: unknown[] = [
  null, true, false, [], {}, [1, 2], { a: 1 }, '', ' ', '0', '-1', '1e400', 'NaN', 'Infinity',
  0, -0, -1, 1.5, 0.1, 1e308, -1e308, 2 ** 53, 2 ** 53 + 2, 2 ** 64, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER,
  '9007199254740993', '18446744073709551616', '0x', '0x' + 'f'.repeat(40), '0x' + 'g'.repeat(40),
  '\u0000', '\u202e', '💥🚀', 'é'.repeat(50), '\ud800', 'x'.repeat(5000), '../../etc/passwd', '%00', '<script>',
  'ETH-USDC', 'eth-usdc', 'bid', 'ask', 'market', 'limit', 'gtc', 'fok', 'expire_both',
];

/** Raw JSON number literals JSON.stringify cannot produce. */
const RAW_NUMBERS = ['1e400', '-1e400', '1.0000000000000001', '1e-400', '123456789012345678901234567890', '-0.0', '1E2', '00', '.5', '+1'];

const METHODS_ROUTED = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];
const METHODS_UNROUTED = ['FOO', 'PROPFIND', 'get', 'post', 'M-SEARCH'];

const BAD_QUERIES = [
  'a=1&a=2', Array.from({ length: 40 }, (_, i) => `p${i}=1`).join('&'), 'q=' + 'x'.repeat(2100), 'a=%zz', 'a=%ff%fe',
  'limit=-1', 'limit=1e9', 'limit=99999999999999999', 'depth=0', 'status=bogus', 'from=abc', '=x', '&&&', 'limit=%F0%9F%92%A5',
];

/** Percent-encodes the UTF-8 bytes of `text` (lone surrogates too, as U+FFFD) except unreserved characters. */
function percentEncode(text: string): string {
  let out = '';
  for (const b of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9._~-]/.test(c) ? c : '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

function addressOf(w: Wallet): string {
  return w.address;
}

/** A valid body of each signed route, signed by an attacker (paths of docs/api.md). */
export interface Seed {
  method: string;
  path: string;
  /** Signs on demand: one signature per request sent, not one per route offered. */
  body: () => Record<string, unknown>;
}

export function signedSeeds(r: Rng, world: FuzzWorld): Seed[] {
  const w = r.pick(world.attackers);
  const other = r.pick(world.attackers);
  const market = r.pick(world.markets);
  const price = r.int(1, 500) * 10_000;
  // One signature per request, without the harness wallet's trial recovery (client CPU).
  const o = { signer: fastSigner(w) };
  const order = { market_id: market, side: r.pick(['bid', 'ask']), price, quantity: r.int(1, 20) * 100 };
  return [
    { method: 'POST', path: '/orders', body: () => w.order(order, o) },
    { method: 'POST', path: '/orders/cancel', body: () => w.cancel({ order_id: r.int(1, 50) }, o) },
    { method: 'POST', path: '/orders/amend', body: () => w.amend({ order_id: r.int(1, 50), price, quantity: 100 }, o) },
    { method: 'POST', path: '/orders/cancel-all', body: () => w.cancelAll(market, o) },
    { method: 'POST', path: '/orders/cancel-after', body: () => w.cancelAfter(r.pick([0, 5000, 60_000]), o) },
    // `requests` with a `kind` per item (docs/api.md): under `orders` every batch was a malformed
    // envelope and no item reached the per-item parser, verify and engine.
    { method: 'POST', path: '/orders/batch', body: () => ({ requests: [{ kind: 'order', ...w.order(order, o) }, { kind: 'cancel_all', ...w.cancelAll(market, o) }] }) },
    { method: 'POST', path: '/withdrawals', body: () => w.withdraw('USDC', String(r.int(1, 1000)), o) },
    { method: 'POST', path: '/withdrawal-signature', body: () => ({ user: addressOf(w), asset: 'USDC', amount: '1', nonce: 1 }) },
    { method: 'POST', path: '/referral/register', body: () => w.referral(addressOf(other), o) },
    { method: 'POST', path: '/force-include', body: () => w.forceInclude(w.order(order, o), o) },
    { method: 'POST', path: '/deposit', body: () => ({ user: addressOf(w), asset: 'USDC', amount: '1' }) },
    // Admin routes whose success changes no victim and leaves trading on (no pause, no fees).
    { method: 'POST', path: '/admin/snapshot', body: () => ({}) },
    { method: 'PUT', path: `/admin/accounts/${addressOf(other)}/credit`, body: () => ({ limit: '1' }) },
    { method: 'POST', path: '/admin/markets', body: () => ({ id: 'ETH-BTC', base: 'ETH', quote: 'BTC', tick_size: 1, lot_size: 1 }) },
  ];
}

/** GET paths with valid and hostile parameters. */
function getPaths(r: Rng, world: FuzzWorld): string[] {
  const m = r.pick(world.markets);
  const a = r.chance(0.5) ? r.pick(world.victims) : addressOf(r.pick(world.attackers));
  return [
    '/health', '/time', '/markets', `/orderbook/${m}`, `/markets/${m}/book`, '/fees', `/markets/${m}/fees`, `/trades/${m}`,
    `/account/${a}/balances`, `/account/${a}/orders`, `/account/${a}/orders/by-client-id/c1`, `/account/${a}/fills`,
    `/da/batches/${r.int(0, 5)}`, '/da/batches', `/orders/${r.int(1, 20)}/da-proof`, `/ohlcv/${m}`, '/leaderboard',
    `/referral/${a}`, `/force-include/${r.int(1, 5)}`, '/admin/state',
  ];
}

/** One mutation of a parsed body (a copy): a field dropped, retyped, added, or the user swapped. */
export function mutateObject(r: Rng, body: Record<string, unknown>, world: FuzzWorld): Record<string, unknown> {
  const out: Record<string, unknown> = structuredClone(body);
  const keys = Object.keys(out);
  const k = keys.length > 0 ? r.pick(keys) : 'x';
  switch (r.int(0, 6)) {
    case 0: delete out[k]; break;
    case 1: out[k] = r.pick(HOSTILE_VALUES); break;
    case 2: out[r.pick(['extra', 'price_ticks', 'user ', 'USER', '__proto__x', 'admin'])] = r.pick(HOSTILE_VALUES); break;
    case 3: {
      // Another account's address under the attacker's signature: must be refused.
      for (const f of ['user', 'address', 'referred', 'referrer']) if (f in out) out[f] = r.pick(world.victims);
      break;
    }
    case 4: out[k] = typeof out[k] === 'number' ? (out[k] as number) + r.pick([1, -1, 1e6, 2 ** 53]) : String(out[k]) + r.pick(['0', ' ', '💥']); break;
    case 5: {
      // A batch: too many or no items, or one item mutated in place (each item is judged alone).
      const items = out.requests;
      if (!Array.isArray(items)) out[k] = [out[k]];
      else if (r.chance(0.5)) out.requests = Array.from({ length: r.pick([0, 21, 65]) }, () => items[0]);
      else items[0] = mutateObject(r, items[0] as Record<string, unknown>, world);
      break;
    }
    default: for (const f of keys) if (r.chance(0.3)) out[f] = r.pick(HOSTILE_VALUES);
  }
  return out;
}

/** Damage to the JSON text itself. */
export function mutateText(r: Rng, text: string): string {
  switch (r.int(0, 8)) {
    case 0: return text.slice(0, r.int(0, text.length));
    case 1: {
      const i = r.int(0, Math.max(0, text.length - 1));
      return text.slice(0, i) + String.fromCharCode(r.int(0, 255)) + text.slice(i + 1);
    }
    case 2: return text.replace(/^\{/, `{"nonce":1,"user":"0x${'0'.repeat(40)}",`); // duplicate keys
    case 3: return '['.repeat(r.int(30, 2000)) + ']'.repeat(r.int(0, 50));
    case 4: return text.replace(/:(\d+)/, `:${r.pick(RAW_NUMBERS)}`);
    case 5: return text.replace(/^\{/, `{"__proto__":{"admin":true},`);
    case 6: return r.pick(['', 'null', '[]', '"x"', '1', 'true', '{', '}', '{"a":}', '\uFEFF{}', '{}garbage']);
    case 7: return text + ' '.repeat(r.int(1, 10)) + r.pick(['', '{}', ',']);
    default: return text.replace(/"([a-z_]+)":/, (_m, k: string) => `"${k}\\u0000":`);
  }
}

/** The next hostile HTTP request. */
export function nextHttpCase(r: Rng, world: FuzzWorld): HttpCase {
  const headers: Record<string, string> = { Host: 'fuzz' };
  if (r.chance(0.5)) headers['X-Admin-Token'] = r.chance(0.7) ? world.admin_token : r.pick(['', 'x', world.admin_token + 'x', world.admin_token.toUpperCase()]);
  const roll = r.float();
  if (roll < 0.2) {
    // GET routes: hostile path parameters and query strings, other methods.
    let path = r.pick(getPaths(r, world));
    if (r.chance(0.3)) path = path.replace(/[^/]+$/, (seg) => percentEncode(String(r.pick(HOSTILE_VALUES))).slice(0, 300) || seg);
    if (r.chance(0.4)) path += '?' + r.pick(BAD_QUERIES);
    const method = r.chance(0.8) ? 'GET' : r.pick(METHODS_ROUTED);
    return { method, path, headers, body: null, kind: `get${method === 'GET' ? '' : ':' + method}`, expect_answer: true };
  }
  if (roll < 0.25) {
    const method = r.pick(METHODS_UNROUTED);
    return { method, path: r.pick(getPaths(r, world)), headers, body: null, kind: 'method:unrouted', expect_answer: false };
  }
  const seed = r.pick(signedSeeds(r, world));
  const seed_body = seed.body();
  let text: string;
  let kind: string;
  if (roll < 0.3) {
    text = JSON.stringify(seed_body);
    kind = 'valid';
  } else if (roll < 0.75) {
    text = JSON.stringify(mutateObject(r, seed_body, world));
    kind = 'object';
  } else if (roll < 0.95) {
    text = mutateText(r, JSON.stringify(seed_body));
    kind = 'text';
  } else {
    text = JSON.stringify({ ...seed_body, pad: 'x'.repeat(r.pick([20_000, 100_000, 1_000_000])) });
    kind = 'oversized';
  }
  let path = seed.path;
  if (r.chance(0.1)) path += '?' + r.pick(BAD_QUERIES);
  const method = r.chance(0.9) ? seed.method : r.pick(METHODS_ROUTED);
  // The operator may change any account: the admin token never travels with a victim's address.
  const lower = text.toLowerCase();
  if (world.victims.some((v) => lower.includes(v) || path.includes(v)) && headers['X-Admin-Token'] === world.admin_token) {
    headers['X-Admin-Token'] = 'not-the-token';
  }
  const body = Buffer.from(text, 'utf8');
  headers['Content-Type'] = 'application/json';
  headers['Content-Length'] = String(body.length);
  return { method, path, headers, body, kind: `${kind}:${seed.path.replace(/\/0x[0-9a-f]+|\/[A-Z]+-[A-Z]+/g, '/:p')}`, expect_answer: true };
}

/** The next hostile WebSocket frame (text, or binary garbage). */
export function nextWsFrame(r: Rng, world: FuzzWorld): { data: string | Buffer; kind: string } {
  const w = r.pick(world.attackers);
  const m = r.pick(world.markets);
  const seeds: Record<string, unknown>[] = [
    { type: 'subscribe', channels: [`book:${m}`, `trades:${m}`, `fills:${r.pick(world.victims)}`], request_id: 'f1' },
    { type: 'unsubscribe', channels: [`book:${m}`] },
    { type: 'ping' },
    { type: 'request_challenge', address: w.address },
    { type: 'auth', address: r.pick(world.victims), signature: '0x' + 'ab'.repeat(65) },
    { type: 'cancel_on_disconnect', enabled: true },
    { type: 'post', id: 'p1', path: '/orders', body: null },
    { type: 'post', id: 'p2', path: r.pick(['/withdrawals', '/admin/state', '/deposit', '/orders/batch', '']), body: {} },
  ];
  const seed = r.pick(seeds);
  if (seed.id === 'p1') seed.body = w.order({ market_id: m, side: 'bid', price: 10_000, quantity: 100 }, { signer: fastSigner(w) });
  const roll = r.float();
  if (roll < 0.15) return { data: JSON.stringify(seed), kind: 'ws:valid' };
  if (roll < 0.6) {
    const mutated = mutateObject(r, seed, world);
    if (seed.type === 'post' && r.chance(0.5)) mutated.body = mutateObject(r, seed.body as Record<string, unknown>, world);
    return { data: JSON.stringify(mutated), kind: 'ws:object' };
  }
  if (roll < 0.9) return { data: mutateText(r, JSON.stringify(seed)), kind: 'ws:text' };
  if (roll < 0.95) return { data: Buffer.from(Array.from({ length: r.int(1, 64) }, () => r.int(0, 255))), kind: 'ws:binary' };
  return { data: JSON.stringify({ ...seed, pad: 'x'.repeat(r.pick([10_000, 17_000, 40_000])) }), kind: 'ws:oversized' };
}
