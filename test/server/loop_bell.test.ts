// The front's wake-up on the real server (src/ring/ring_wake.ts): with the loop bell (the default
// when `make native` built native/build/loop_bell.node) and with RINGBOOK_LOOP_BELL=atomics
// (Atomics.waitAsync), the same signed requests get the same answers, byte for byte once request
// ids and times are set aside, over HTTP and the WebSocket; and a burst of concurrent orders on
// the bell is answered in full, each order readable once its answer arrived. The same with the
// front's answer spin on (config front.answer_spin_us: the front keeps its loop turning while a
// commit is awaited instead of sleeping on the bell): same bytes, same WS trade, every answered
// order readable at once; and the spin server's /admin/state answer_spin_turns shows it spun.
import { describe, expect, it } from 'vitest';
import { adminState, api, deposit, startServer, Wallet, type StartedServer } from './harness.js';
import { ok } from './checks.js';
import { WsClient } from '../ws/client.js';
import { ANSWER_SPIN_WITHOUT_BELL } from '../../src/gateway/matcher_link_events.js';

const MARKET = 'ETH-USDC';
const P = 2_000_000_000;
const BUILT = process.platform === 'linux';
/** The answer spin in these tests: far above a commit, so waits are mostly spun through. */
const SPIN_US = 5_000;

/** What differs between two equal runs on two servers: request ids and times. */
function normalized(text: string): string {
  return text
    .replace(/"request_id":"[^"]*"/g, '"request_id":"*"')
    .replace(/"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/g, '"<time>"')
    .replace(/"(time_ms|timestamp_ms)":\d+/g, '"$1":0');
}

/** One fixed script of signed requests (fixed keys: both servers see the same wallets); its answers and WS trades. */
async function transcript(s: StartedServer): Promise<string[]> {
  const a = api(s.url);
  const maker = new Wallet(new Uint8Array(32).fill(7));
  const taker = new Wallet(new Uint8Array(32).fill(9));
  ok(await deposit(s, maker.address, 'ETH', '10'));
  ok(await deposit(s, taker.address, 'USDC', '100000'));
  const ws = await WsClient.connect(s.url);
  const out: string[] = [];
  try {
    await ws.request({ type: 'subscribe', channels: [`trades:${MARKET}`] }, 'subscribed');
    const answers = [
      await a.post('/orders', maker.order({ market_id: MARKET, side: 'ask', price: P, quantity: 1_000_000, client_order_id: 'mk-1' })),
      await a.post('/orders', taker.order({ market_id: MARKET, side: 'bid', price: P, quantity: 400_000 })),
      // Refused by the engine (more than the balance): an answer from a REJECTED event.
      await a.post('/orders', taker.order({ market_id: MARKET, side: 'bid', price: P, quantity: 900_000_000 })),
      await a.post('/orders/cancel', maker.cancel({ client_order_id: 'mk-1' })),
      await a.post('/orders', maker.order({ market_id: MARKET, side: 'ask', price: P, quantity: 100_000, time_in_force: 'ioc' })),
    ];
    for (const r of answers) out.push(`${r.status} ${normalized(r.text)}`);
    out.push(normalized(JSON.stringify(await ws.nextType('trade'))));
  } finally {
    ws.close();
  }
  return out;
}

describe('the front woken by the loop bell or by Atomics.waitAsync', () => {
  it('answers the same requests with the same bytes either way, and with the answer spin', async () => {
    const bell = await startServer();
    const atomics = await startServer({ env: { RINGBOOK_LOOP_BELL: 'atomics' } });
    const spin = await startServer({ config: { front: { answer_spin_us: SPIN_US } } });
    try {
      expect((await adminState(bell)).event_ring_wake).toBe(BUILT ? 'bell' : 'atomics');
      expect((await adminState(atomics)).event_ring_wake).toBe('atomics');
      const [with_bell, with_atomics, with_spin] = [await transcript(bell), await transcript(atomics), await transcript(spin)];
      expect(with_bell).toHaveLength(6);
      expect(with_bell[1]).toMatch(/^200 .*"status":"filled"/);
      expect(with_bell[2]).toMatch(/^4\d\d /);
      expect(with_bell).toEqual(with_atomics);
      expect(with_spin).toEqual(with_bell);
      // The spin server did spin (config front.answer_spin_us wired through to the event pump),
      // and the others never do.
      const spun = (await adminState(spin)).answer_spin_turns as number;
      if (BUILT) expect(spun).toBeGreaterThan(0);
      else expect(spun, 'no bell: no spin').toBe(0);
      expect((await adminState(bell)).answer_spin_turns).toBe(0);
      expect((await adminState(atomics)).answer_spin_turns).toBe(0);
    } finally {
      expect((await bell.stop()).code).toBe(0);
      expect((await atomics.stop()).code).toBe(0);
      expect((await spin.stop()).code).toBe(0);
    }
  });

  it('the answer spin without the bell (RINGBOOK_LOOP_BELL=atomics) is off, and the start says so', async () => {
    const spin_off = await startServer({ env: { RINGBOOK_LOOP_BELL: 'atomics' }, config: { front: { answer_spin_us: SPIN_US } } });
    const spin_on = await startServer({ config: { front: { answer_spin_us: SPIN_US } } });
    try {
      const maker = Wallet.random();
      ok(await deposit(spin_off, maker.address, 'ETH', '1'));
      ok(await api(spin_off.url).post('/orders', maker.order({ market_id: MARKET, side: 'ask', price: P, quantity: 10_000 })));
      const st = await adminState(spin_off);
      expect(st.event_ring_wake).toBe('atomics');
      expect(st.answer_spin_turns).toBe(0);
      expect(spin_off.output().stderr).toContain(ANSWER_SPIN_WITHOUT_BELL);
      if (BUILT) expect(spin_on.output().stderr, 'on the bell the spin runs: no warning').not.toContain(ANSWER_SPIN_WITHOUT_BELL);
    } finally {
      expect((await spin_off.stop()).code).toBe(0);
      expect((await spin_on.stop()).code).toBe(0);
    }
  });

  for (const answer_spin_us of [0, SPIN_US]) {
    it(`a burst of concurrent signed orders is answered in full, each order readable once answered (answer spin ${answer_spin_us} us)`, async () => {
      await burst(answer_spin_us);
    });
  }
});

/** Rounds of concurrent orders from eight wallets; after each answer, the wallet's open orders (a GET) hold it. */
async function burst(answer_spin_us: number): Promise<void> {
  const s = await startServer({ config: { front: { answer_spin_us } } });
  try {
    // The burst is meant for the bell: on Linux `make test` builds the module, so the front uses it.
    expect((await adminState(s)).event_ring_wake).toBe(BUILT ? 'bell' : 'atomics');
    const a = api(s.url);
    const wallets = Array.from({ length: 8 }, () => Wallet.random());
    for (const w of wallets) ok(await deposit(s, w.address, 'USDC', '100000'));
    const rounds = 5;
    for (let round = 0; round < rounds; round++) {
      const answers = await Promise.all(wallets.flatMap((w) => [1, 2, 3].map((k) =>
        a.post('/orders', w.order({ market_id: MARKET, side: 'bid', price: P - (round * 3 + k) * 1_000_000, quantity: 10_000 })))));
      for (const [i, r] of answers.entries()) {
        const order = ok(r);
        expect(order.status).toBe('open');
        const w = wallets[Math.floor(i / 3)];
        const open = ok(await a.get(`/account/${w.address}/orders?limit=1000`)) as { order_id: number }[];
        expect(open.map((o) => o.order_id)).toContain(order.order_id);
      }
    }
    const st = await adminState(s);
    expect(st.open_orders).toBe(wallets.length * 3 * rounds);
    expect(st.inflight_requests).toBe(0);
    if (answer_spin_us === 0 || !BUILT) expect(st.answer_spin_turns).toBe(0);
    else expect(st.answer_spin_turns).toBeGreaterThan(0);
  } finally {
    expect((await s.stop()).code).toBe(0);
  }
}
