// The front reuses scratch objects on the signed path (issue 11: its garbage per request): the
// stage stamps and Request pools, the verify codec's and the recoverer's scratch bytes, the corked answer write,
// the consent slot offsets, the answer's JSON buffer. Each is owned by one request at a time; one
// given back or overwritten while a request still held it would put a value of one request into
// another's answer. Here many requests from different wallets are in flight at once, round after
// round (each round reusing what the one before gave back), and every answer must carry its own
// request's values: order fields, fills, error code and request id.
import { describe, expect, it } from 'vitest';
import { api, deposit, startServer, Wallet, type ApiResponse } from './harness.js';

const WALLETS = 8;
const ROUNDS = 3;

describe('reused objects on the signed path do not leak between concurrent requests', () => {
  it('concurrent orders from different wallets each get their own answer (fields, fills, errors, request ids)', async () => {
    const s = await startServer({ config: { diagnostics: { stage_timings: true } } });
    try {
      const a = api(s.url);
      const wallets = Array.from({ length: WALLETS }, () => Wallet.random());
      for (const w of wallets) {
        expect((await deposit(s, w.address, 'USDC', '1000000')).status).toBe(200);
        expect((await deposit(s, w.address, 'ETH', '1000')).status).toBe(200);
      }
      const request_ids = new Set<string>();
      const seen = (r: ApiResponse): void => {
        const id = r.headers['x-request-id'];
        expect(id).toBeTruthy();
        expect(request_ids.has(id), `request id ${id} answered twice`).toBe(false);
        request_ids.add(id);
      };
      for (let round = 0; round < ROUNDS; round++) {
        // Wallet k: a resting bid of its own price and size, and a bad signature. Then wallets
        // 0..6 each send an ioc ask of their own size at the round's best bid (wallet 7's): each
        // fills whole against it, so each taker's one fill is its own.
        const sent: { kind: 'bid' | 'ask' | 'bad'; k: number; coid: string; price: number; quantity: number; p: Promise<ApiResponse> }[] = [];
        for (let k = 0; k < WALLETS; k++) {
          const w = wallets[k];
          const price = 1_000_000_000 + (round * WALLETS + k) * 1_000_000;
          const quantity = 100_000 * (k + 1);
          const coid = `r${round}-w${k}-bid`;
          sent.push({ kind: 'bid', k, coid, price, quantity, p: a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price, quantity, client_order_id: coid })) });
          const bad = w.order({ market_id: 'ETH-USDC', side: 'bid', price, quantity, client_order_id: `r${round}-w${k}-bad` }, { signer: () => '0x' + '11'.repeat(65) });
          sent.push({ kind: 'bad', k, coid: '', price, quantity, p: a.post('/orders', bad) });
        }
        const bids = await Promise.all(sent.map((x) => x.p));
        const top = sent[2 * (WALLETS - 1)];
        expect(top.kind === 'bid' && top.k === WALLETS - 1).toBe(true);
        const asks: typeof sent = [];
        for (let k = 0; k < WALLETS - 1; k++) {
          const coid = `r${round}-w${k}-ask`;
          const quantity = 10_000 * (k + 1); // together 280,000: within the best bid's 800,000
          asks.push({
            kind: 'ask', k, coid, price: top.price, quantity,
            p: a.post('/orders', wallets[k].order({ market_id: 'ETH-USDC', side: 'ask', price: top.price, quantity, client_order_id: coid, time_in_force: 'ioc' })),
          });
        }
        // The asks go in together with a second set of bad signatures, so inline checks, worker
        // checks and refusals interleave in the same turns.
        const more_bad = wallets.map((w, k) => a.post('/orders', w.order(
          { market_id: 'ETH-USDC', side: 'ask', price: 1, quantity: 1, client_order_id: `r${round}-w${k}-bad2` },
          { signer: () => '0x' + '22'.repeat(65) },
        )));
        const ask_answers = await Promise.all(asks.map((x) => x.p));
        const bad_answers = await Promise.all(more_bad);
        const order_ids = new Set<string>();
        for (let j = 0; j < sent.length; j++) {
          const x = sent[j];
          const r = bids[j];
          seen(r);
          if (x.kind === 'bad') {
            expect(r.status, `round ${round} wallet ${x.k} bad signature`).toBe(401);
            expect(r.body.error).toBe('INVALID_SIGNATURE');
            expect(r.body.request_id).toBe(r.headers['x-request-id']);
            continue;
          }
          expect(r.status, `round ${round} wallet ${x.k}: ${r.text}`).toBe(200);
          const d = r.body.data;
          expect({ coid: d.client_order_id, side: d.side, price: d.price, quantity: d.quantity, fills: d.fills })
            .toEqual({ coid: x.coid, side: 'bid', price: x.price, quantity: x.quantity, fills: [] });
          expect(order_ids.has(String(d.order_id))).toBe(false);
          order_ids.add(String(d.order_id));
        }
        for (let j = 0; j < asks.length; j++) {
          const x = asks[j];
          const r = ask_answers[j];
          seen(r);
          expect(r.status, `round ${round} wallet ${x.k} ask: ${r.text}`).toBe(200);
          const d = r.body.data;
          expect({ coid: d.client_order_id, side: d.side, price: d.price, quantity: d.quantity, filled: d.filled_quantity })
            .toEqual({ coid: x.coid, side: 'ask', price: x.price, quantity: x.quantity, filled: x.quantity });
          expect(d.fills.map((f: { price: number; quantity: number; is_maker: boolean }) => [f.price, f.quantity, f.is_maker]))
            .toEqual([[x.price, x.quantity, false]]);
          expect(order_ids.has(String(d.order_id))).toBe(false);
          order_ids.add(String(d.order_id));
        }
        for (const r of bad_answers) {
          seen(r);
          expect(r.status).toBe(401);
          expect(r.body.request_id).toBe(r.headers['x-request-id']);
        }
      }
      expect(request_ids.size).toBe(ROUNDS * (WALLETS * 3 + WALLETS - 1));
      expect((await s.stop()).code).toBe(0);
    } finally {
      await s.stop();
    }
  }, 120_000);
});
