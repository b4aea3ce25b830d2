// The front thread checking signatures itself when their verify task waited too long (config
// verify.steal_after_us; src/auth/verify_pool.ts stealLate), on the real server. With a 1 µs limit
// and tasks of 2 checks the front and the verify worker race for almost every task, so verdicts
// come back out of order all the time; a backlog of several wallets' posts, each wallet's in nonce
// order on its own WebSocket, must still be served completely and each wallet in its order
// (a nonce applied before a lower one would make the lower one DUPLICATE_NONCE).
//
// Inline checks are off here (verify.inline_items_max 0; they have their own tests in
// test/server/verify_inline.test.ts): the stolen count below needs the posts to reach the server
// as one backlog, and with inline checks on (the default 2) that holds only on a quiet machine.
// Every post is also signed before the first is sent: signing here takes 4-7 ms a post (240
// posts: 1.0-1.8 s), so posts signed as they were sent reached the server one every few ms, each
// alone in its event-loop turn with the pool idle: light load, which the inline policy
// (src/auth/verify_inline.ts) rightly checks on the front at arrival (213-235 of the 240 inline,
// 2-11 stolen, none in 10 of 11 runs), leaving no task to steal. Signed first, the posts arrive
// as one on an idle machine (3 runs with inline checks on: 2-3 inline, 18-82 stolen); but on a
// loaded 2-core CI machine the client's sends and the server's reads interleave, the posts come
// in several turns, and each light turn is checked inline again, so with inline checks on the
// stolen count could stay at its start and fail the test with nothing wrong.
import { describe, expect, it } from 'vitest';
import { balances, deposit, Wallet, type Api, type StartedServer } from './harness.js';
import { ok } from './checks.js';
import { metricValue } from './metrics_scrape.js';
import { wsServerPerFile, type Msg, type WsClient } from '../ws/client.js';

const WALLETS = 6;
const POSTS_PER_WALLET = 40;
let s: StartedServer;
let a: Api;
const { connect } = wsServerPerFile((started, client) => {
  s = started;
  a = client;
}, { config: { verify: { task_items_max: 2, steal_after_us: 1, inline_items_max: 0 } } });

/** ringbook_verify_front_checks_total{reason="stolen"} from the server's metrics listener. */
function stolen(): Promise<number> {
  return metricValue(s, 'ringbook_verify_front_checks_total', 'reason="stolen"');
}

describe('a backlog of signed posts with the front stealing verify tasks', () => {
  it('is answered completely, each wallet\'s orders applied in nonce order', async () => {
    const wallets = Array.from({ length: WALLETS }, () => Wallet.random());
    for (const w of wallets) expect((await deposit(s, w.address, 'USDC', '1000000')).status).toBe(200);
    const before = await stolen();
    const sockets: WsClient[] = [];
    for (let k = 0; k < WALLETS; k++) sockets.push(await connect());
    // Every post of every wallet is signed, then sent before any answer is read: one backlog.
    const bodies = wallets.map((w, k) => Array.from({ length: POSTS_PER_WALLET }, (_, i) =>
      w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000 + i * 10_000, quantity: 100, client_order_id: `w${k}-${i}` })));
    const answers: Promise<Msg>[][] = wallets.map((_w, k) => Array.from({ length: POSTS_PER_WALLET }, (_, i) => {
      const id = `w${k}-${i}`;
      sockets[k].send({ type: 'post', id, path: '/orders', body: bodies[k][i] });
      return sockets[k].next((m) => m.type === 'response' && m.id === id, 30_000);
    }));
    for (let k = 0; k < WALLETS; k++) {
      const got = await Promise.all(answers[k]);
      const statuses = got.map((m) => m.status);
      expect(statuses, JSON.stringify(got.find((m) => m.status !== 200)?.body)).toEqual(new Array(POSTS_PER_WALLET).fill(200));
      // The engine numbers orders as it applies them: this wallet's ids rise with its nonces.
      const ids = got.map((m) => Number(m.body.data.order_id));
      for (let i = 1; i < ids.length; i++) expect(ids[i], `wallet ${k}, post ${i}`).toBeGreaterThan(ids[i - 1]);
      expect(ok(await a.get(`/account/${wallets[k].address}/orders`))).toHaveLength(POSTS_PER_WALLET);
      expect((await balances(s, wallets[k].address)).nonce_high_water).toBe(POSTS_PER_WALLET);
    }
    // The front did take tasks (the race above was real).
    expect(await stolen()).toBeGreaterThan(before);
  });
});
