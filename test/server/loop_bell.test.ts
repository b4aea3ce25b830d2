// The front's wake-up on the real server (src/ring/ring_wake.ts): with the loop bell (the default
// when `make native` built native/build/loop_bell.node) and with RINGBOOK_LOOP_BELL=atomics
// (Atomics.waitAsync), the same signed requests get the same answers, byte for byte once request
// ids and times are set aside, over HTTP and the WebSocket; and a burst of concurrent orders on
// the bell is answered in full, each order readable once its answer arrived. The same with the
// front's answer spin on (config front.answer_spin_us: the front keeps its loop turning while a
// commit is awaited instead of sleeping on the bell): same bytes, same WS trade, every answered
// order readable at once; and the spin server's /admin/state answer_spin_turns shows it spun.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

/**
 * The four servers of this file, started together once (each start and stop is a Node process
 * and an LMDB open: the tests used to start seven). Each test uses its own wallets, and the burst
 * counts what it added (open orders, spin turns), so the tests do not depend on each other.
 * bell: the default wake-up; atomics: RINGBOOK_LOOP_BELL=atomics; spin: the default with the
 * answer spin; spin_off: the answer spin asked for without the bell.
 */
let bell: StartedServer;
let atomics: StartedServer;
let spin: StartedServer;
let spin_off: StartedServer;

beforeAll(async () => {
  [bell, atomics, spin, spin_off] = await Promise.all([
    startServer(),
    startServer({ env: { RINGBOOK_LOOP_BELL: 'atomics' } }),
    startServer({ config: { front: { answer_spin_us: SPIN_US } } }),
    startServer({ env: { RINGBOOK_LOOP_BELL: 'atomics' }, config: { front: { answer_spin_us: SPIN_US } } }),
  ]);
});

afterAll(async () => {
  const stopped = await Promise.all([bell, atomics, spin, spin_off].map((s) => s?.stop()));
  for (const r of stopped) expect(r?.code).toBe(0);
});

describe('the front woken by the loop bell or by Atomics.waitAsync', () => {
  it('answers the same requests with the same bytes either way, and with the answer spin', async () => {
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
  });

  it('the answer spin without the bell (RINGBOOK_LOOP_BELL=atomics) is off, and the start says so', async () => {
    const spin_on = spin;
    const maker = Wallet.random();
    ok(await deposit(spin_off, maker.address, 'ETH', '1'));
    ok(await api(spin_off.url).post('/orders', maker.order({ market_id: MARKET, side: 'ask', price: P, quantity: 10_000 })));
    const st = await adminState(spin_off);
    expect(st.event_ring_wake).toBe('atomics');
    expect(st.answer_spin_turns).toBe(0);
    expect(spin_off.output().stderr).toContain(ANSWER_SPIN_WITHOUT_BELL);
    if (BUILT) expect(spin_on.output().stderr, 'on the bell the spin runs: no warning').not.toContain(ANSWER_SPIN_WITHOUT_BELL);
  });

  for (const answer_spin_us of [0, SPIN_US]) {
    it(`a burst of concurrent signed orders is answered in full, each order readable once answered (answer spin ${answer_spin_us} us)`, async () => {
      await burst(answer_spin_us === 0 ? bell : spin, answer_spin_us);
    });
  }
});

/**
 * Rounds of concurrent orders from eight wallets on `s` (front.answer_spin_us `answer_spin_us`);
 * after each answer, the wallet's open orders (a GET) hold it.
 */
async function burst(s: StartedServer, answer_spin_us: number): Promise<void> {
  // The burst is meant for the bell: on Linux `make test` builds the module, so the front uses it.
  const before = await adminState(s);
  expect(before.event_ring_wake).toBe(BUILT ? 'bell' : 'atomics');
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
  // The burst's own orders (the server is the file's: count from what it held before).
  expect(st.open_orders - before.open_orders).toBe(wallets.length * 3 * rounds);
  expect(st.inflight_requests).toBe(0);
  if (answer_spin_us === 0 || !BUILT) expect(st.answer_spin_turns).toBe(0);
  else expect(st.answer_spin_turns, 'the burst itself was spun through').toBeGreaterThan(before.answer_spin_turns);
}
