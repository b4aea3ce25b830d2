// The front's inline signature checks (config verify.inline_items_max; src/auth/verify_inline.ts),
// on the real server: at light load (one request at a time) every check runs on the front at the
// request's arrival and the verify worker checks none; a burst (six wallets' posts sent at once
// over WebSockets) goes mostly to the worker, each wallet's orders still applied in nonce order; light
// load after the burst is checked inline again.
import { describe, expect, it } from 'vitest';
import { balances, deposit, Wallet, type Api, type StartedServer } from './harness.js';
import { ok } from './checks.js';
import { metricValue } from './metrics_scrape.js';
import { wsServerPerFile, type Msg, type WsClient } from '../ws/client.js';

const WALLETS = 6;
const POSTS_PER_WALLET = 40;
const LIGHT_POSTS = 12;
let s: StartedServer;
let a: Api;
const { connect } = wsServerPerFile((started, client) => {
  s = started;
  a = client;
  // Stealing off (test/server/verify_steal.test.ts covers it): on a loaded machine the front could
  // otherwise take every task of a worker that waited 1 ms for a core, and the burst would show none.
}, { config: { verify: { inline_items_max: 2, steal_after_us: 0 } } });

/** Signature checks so far: all, the front's inline ones, the front's stolen ones; the rest were the worker's. */
async function checks(): Promise<{ all: number; inline: number; stolen: number }> {
  return {
    all: await metricValue(s, 'ringbook_signatures_verified_total'),
    inline: await metricValue(s, 'ringbook_verify_front_checks_total', 'reason="inline"'),
    stolen: await metricValue(s, 'ringbook_verify_front_checks_total', 'reason="stolen"'),
  };
}

/** Checks between two readings; `worker` is what the front did not check (stealing is off: `stolen` must stay 0). */
function since(before: { all: number; inline: number; stolen: number }, after: typeof before): { all: number; inline: number; worker: number } {
  const all = after.all - before.all;
  const inline = after.inline - before.inline;
  expect(after.stolen - before.stolen, 'stealing is off (steal_after_us 0)').toBe(0);
  return { all, inline, worker: all - inline };
}

/** `count` posts of `w`, one at a time (each answered before the next is sent): light load. */
async function lightPosts(w: Wallet, count: number, price_base: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const r = await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: price_base + i * 10_000, quantity: 100 }));
    expect(r.status, r.text).toBe(200);
  }
}

describe('inline signature checks on the front', () => {
  it('checks one-at-a-time requests on the front, a burst on the worker in each wallet\'s order, and light load inline again', async () => {
    const wallets = Array.from({ length: WALLETS }, () => Wallet.random());
    for (const w of wallets) expect((await deposit(s, w.address, 'USDC', '1000000')).status).toBe(200);

    // Light load: every check inline, none by the worker.
    let before = await checks();
    await lightPosts(wallets[0], LIGHT_POSTS, 1_000_000_000);
    let d = since(before, await checks());
    expect(d.all).toBe(LIGHT_POSTS);
    expect(d.inline).toBe(LIGHT_POSTS);
    expect(d.worker).toBe(0);

    // A burst: every post of every wallet sent before any answer is read.
    const sockets: WsClient[] = [];
    for (let k = 0; k < WALLETS; k++) sockets.push(await connect());
    // Signed first (the test's signing is ~1 ms a post: sent as signed, they would trickle in).
    const bodies = wallets.map((w, k) => Array.from({ length: POSTS_PER_WALLET }, (_, i) =>
      w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_100_000_000 + i * 10_000, quantity: 100, client_order_id: `w${k}-${i}` })));
    before = await checks();
    const answers: Promise<Msg>[][] = wallets.map((_, k) => bodies[k].map((body, i) => {
      const id = `w${k}-${i}`;
      sockets[k].send({ type: 'post', id, path: '/orders', body });
      return sockets[k].next((m) => m.type === 'response' && m.id === id, 30_000);
    }));
    for (let k = 0; k < WALLETS; k++) {
      const got = await Promise.all(answers[k]);
      expect(got.map((m) => m.status), JSON.stringify(got.find((m) => m.status !== 200)?.body)).toEqual(new Array(POSTS_PER_WALLET).fill(200));
      // The engine numbers orders as it applies them: this wallet's ids rise with its nonces.
      const ids = got.map((m) => Number(m.body.data.order_id));
      for (let i = 1; i < ids.length; i++) expect(ids[i], `wallet ${k}, post ${i}`).toBeGreaterThan(ids[i - 1]);
    }
    d = since(before, await checks());
    expect(d.all).toBe(WALLETS * POSTS_PER_WALLET);
    // Mostly the worker's: at most 2 inline per turn, and none in a turn within 1 ms of a turn of 3
    // or more (a loaded test machine splits the burst into more, smaller turns: hence only "most").
    expect(d.worker).toBeGreaterThan(WALLETS * POSTS_PER_WALLET / 2);

    // Light again: inline again.
    before = await checks();
    await lightPosts(wallets[1], 4, 1_200_000_000);
    d = since(before, await checks());
    expect(d).toEqual({ all: 4, inline: 4, worker: 0 });

    const counts = [LIGHT_POSTS + POSTS_PER_WALLET, POSTS_PER_WALLET + 4, ...new Array(WALLETS - 2).fill(POSTS_PER_WALLET)];
    for (let k = 0; k < WALLETS; k++) {
      expect(ok(await a.get(`/account/${wallets[k].address}/orders`))).toHaveLength(counts[k]);
      expect((await balances(s, wallets[k].address)).nonce_high_water).toBe(counts[k]);
    }
  });
});
