// Read-your-writes on the real server: the front writes a batch's HTTP answers before the other
// consumers hear the batch (market data, the WebSocket fan-out, the DA packer: MatcherLink
// dispatchBatch), but only once the read model holds it. A client that gets its answer and at once
// reads its orders, fills and balances must see what the answer says. Many clients at once, so
// the answers come in batches of several requests and the reads race the rest of each batch's work.
import { describe, expect, it } from 'vitest';
import { balances, deposit, Wallet, type Api, type StartedServer } from './harness.js';
import { ok } from './checks.js';
import { serverPerFile } from './per_file.js';

let s: StartedServer;
let a: Api;

serverPerFile((started, client) => {
  s = started;
  a = client;
});

/** Makers and takers per round; rounds of concurrent takers. */
const PAIRS = 16;
const ROUNDS = 3;
const PRICE = 2_000_000_000;

async function readBack(taker: Wallet, taken: any): Promise<void> {
  // Sent the moment the answer arrived, all three at once.
  const [orders, fills, bal] = await Promise.all([
    a.get(`/account/${taker.address}/orders?status=all`),
    a.get(`/account/${taker.address}/fills`),
    balances(s, taker.address),
  ]);
  const listed = ok(orders).find((o: any) => o.order_id === taken.order_id);
  expect(listed, `order ${taken.order_id} listed after its answer`).toBeDefined();
  expect(listed.status).toBe(taken.status);
  expect(listed.filled_quantity).toBe(taken.filled_quantity);
  const fill_ids = ok(fills).filter((f: any) => f.order_id === taken.order_id).map((f: any) => f.fill_id).sort();
  expect(fill_ids).toEqual(taken.fills.map((f: any) => f.fill_id).sort());
  // A fresh taker funded with USDC only: its ETH is what the answer's fills bought.
  const bought = taken.fills.reduce((n: number, f: any) => n + f.quantity, 0);
  expect(bought).toBe(taken.filled_quantity);
  expect(bal.ETH).toEqual({ available: bought, locked: 0 });
}

describe('read-your-writes after an answer', () => {
  it('a taker that reads its orders, fills and balances on its answer sees them, batch after batch', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const makers = Array.from({ length: PAIRS }, () => Wallet.random());
      const takers = Array.from({ length: PAIRS }, () => Wallet.random());
      await Promise.all(makers.map((m) => deposit(s, m.address, 'ETH', '1').then(ok)));
      await Promise.all(takers.map((t) => deposit(s, t.address, 'USDC', '100000').then(ok)));
      // Each maker rests an ask at its own price; each of its answers is read back at once too.
      await Promise.all(makers.map(async (m, i) => {
        const placed = ok(await a.post('/orders', m.order({ market_id: 'ETH-USDC', side: 'ask', price: PRICE + i * 10_000, quantity: 300 })));
        expect(placed.status).toBe('open');
        const open = ok(await a.get(`/account/${m.address}/orders`));
        expect(open.map((o: any) => o.order_id)).toContain(placed.order_id);
        expect((await balances(s, m.address)).ETH).toEqual({ available: 1_000_000 - 300, locked: 300 });
      }));
      // The takers all at once: whichever asks each one meets, what its answer says is readable.
      await Promise.all(takers.map(async (t) => {
        const taken = ok(await a.post('/orders', t.order({ market_id: 'ETH-USDC', side: 'bid', price: PRICE + PAIRS * 10_000, quantity: 300 })));
        expect(taken.status).toBe('filled');
        await readBack(t, taken);
      }));
    }
  });
});
