// Order entry over the WebSocket on the real server: a `post` is answered on the same connection
// by a `response` with the same id, the HTTP status and exactly the HTTP body (successes, shape
// errors, signature errors, engine errors and 429), with the per-wallet rate limit shared with
// HTTP, the connection's in-flight limit, an unknown path (404) and a batch.
import { describe, expect, it } from 'vitest';
import { deposit, Wallet, type Api, type ApiResponse, type StartedServer } from '../server/harness.js';
import { wsServerPerFile, type Msg, type WsClient } from './client.js';

const ORDERS_PER_WALLET = 6;
const IN_FLIGHT_MAX = 2;
let s: StartedServer;
let a: Api;
const { connect } = wsServerPerFile((started, client) => {
  s = started;
  a = client;
}, { config: { rate_limits: { orders_per_wallet: ORDERS_PER_WALLET }, limits: { ws_posts_in_flight_max: IN_FLIGHT_MAX } } });

let next_id = 0;
async function post(c: WsClient, path: string, body: unknown): Promise<Msg> {
  const id = `p-${++next_id}`;
  c.send({ type: 'post', id, path, body });
  return c.next((m) => m.type === 'response' && m.id === id);
}

/** The body text with what differs between two equal requests (ids, times) made comparable. */
function normalized(text: string): string {
  return text
    .replace(/"request_id":"[^"]*"/g, '"request_id":"*"')
    .replace(/"(order_id|fill_id)":\d+/g, '"$1":0')
    .replace(/"batch_id":"\d+"/g, '"batch_id":"0"')
    .replace(/"(created_at|updated_at)":"[^"]*"/g, '"$1":"*"');
}

/** The WebSocket body as text: JSON.stringify of the parsed body gives back the server's compact text. */
function wsText(m: Msg): string {
  return JSON.stringify(m.body);
}

function sameAnswer(http: ApiResponse, ws: Msg): void {
  expect(ws.status).toBe(http.status);
  expect(JSON.stringify(JSON.parse(http.text))).toBe(http.text); // compact, so the comparison is exact
  expect(normalized(wsText(ws))).toBe(normalized(http.text));
}

async function funded(): Promise<Wallet> {
  const w = Wallet.random();
  await deposit(s, w.address, 'ETH', '1');
  await deposit(s, w.address, 'USDC', '10000');
  return w;
}

const MARKET = 'ETH-USDC';
const P = 1_000_000_000;

describe('WebSocket post', () => {
  it('answers with the id, the status and exactly the HTTP body: success and every kind of error', async () => {
    const c = await connect();
    const h = await funded();
    const w = await funded();
    // The same order, over HTTP by h and over the WebSocket by w (two wallets in the same state).
    sameAnswer(
      await a.post('/orders', h.order({ market_id: MARKET, side: 'bid', price: P, quantity: 100, client_order_id: 'x1' })),
      await post(c, '/orders', w.order({ market_id: MARKET, side: 'bid', price: P, quantity: 100, client_order_id: 'x1' })),
    );
    // Shape error, bad signature, engine errors (tick, duplicate nonce, unknown order), cancel-all.
    const cases: [string, (x: Wallet) => Record<string, unknown>][] = [
      ['/orders', (x) => ({ ...x.order({ market_id: MARKET, side: 'bid', price: P, quantity: 100 }), extra: 1 })],
      ['/orders', (x) => ({ ...x.order({ market_id: MARKET, side: 'bid', price: P, quantity: 100 }), signature: '0x' + '1b'.repeat(65) })],
      ['/orders', (x) => x.order({ market_id: MARKET, side: 'bid', price: P + 1, quantity: 100 })],
      ['/orders', (x) => x.order({ market_id: MARKET, side: 'bid', price: P, quantity: 100 }, { nonce: 1 })],
      ['/orders/cancel', (x) => x.cancel({ order_id: 987_654_321 })],
      ['/orders/amend', (x) => x.amend({ order_id: 987_654_321, price: P, quantity: 100 })],
      ['/orders', (x) => x.order({ market_id: 'NOPE-USDC', side: 'bid', price: P, quantity: 100 })],
      ['/orders/cancel-all', (x) => x.cancelAll(MARKET)],
    ];
    for (const [path, body] of cases) sameAnswer(await a.post(path, body(h)), await post(c, path, body(w)));
    // A batch, the same way.
    const batch = (x: Wallet) => ({ requests: [
      { kind: 'order', ...x.order({ market_id: MARKET, side: 'bid', price: P, quantity: 100 }) },
      { kind: 'order', ...x.order({ market_id: MARKET, side: 'bid', price: P + 1, quantity: 100 }) },
      { kind: 'cancel_all', ...x.cancelAll() },
    ] });
    sameAnswer(await a.post('/orders/batch', batch(h)), await post(c, '/orders/batch', batch(w)));
  });

  it('answers a post before the book snapshot of its batch on the same connection (answers are held to the batch\'s end, not past it)', async () => {
    const c = await connect();
    const w = await funded();
    await c.request({ type: 'subscribe', channels: [`book:${MARKET}`] }, 'subscribed');
    const start = (await c.nextType('book_snapshot')).sequence as number;
    const answer = await post(c, '/orders', w.order({ market_id: MARKET, side: 'bid', price: P - 3_000_000, quantity: 100 }));
    expect(answer.status).toBe(200);
    await c.next((m) => m.type === 'book_snapshot' && (m.sequence as number) > start);
    const at = c.all.indexOf(answer);
    const snap_at = c.all.findIndex((m) => m.type === 'book_snapshot' && (m.sequence as number) > start);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(at).toBeLessThan(snap_at);
  });

  it('shares the per-wallet rate limit with HTTP; its 429 is the HTTP 429 body', async () => {
    const c = await connect();
    const w = await funded();
    for (let i = 0; i < ORDERS_PER_WALLET - 1; i++) {
      const r = await post(c, '/orders', w.order({ market_id: MARKET, side: 'bid', price: P - (i + 1) * 10_000, quantity: 100 }));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    const last = await a.post('/orders', w.order({ market_id: MARKET, side: 'bid', price: P - 100_000, quantity: 100 }));
    expect(last.status).toBe(200); // the limit's last order, over HTTP
    const http429 = await a.post('/orders', w.order({ market_id: MARKET, side: 'bid', price: P - 110_000, quantity: 100 }));
    const ws429 = await post(c, '/orders', w.order({ market_id: MARKET, side: 'bid', price: P - 120_000, quantity: 100 }));
    expect(http429.status).toBe(429);
    expect(ws429.status).toBe(429);
    expect(wsText(ws429)).toBe(http429.text);
    expect(ws429.body).toEqual({ ok: false, data: null, error: `Too many orders from this wallet: the limit is ${ORDERS_PER_WALLET} per minute.` });
  });

  it('limits the posts in flight per connection, answers every id once, and answers an unknown path 404', async () => {
    const c = await connect();
    const w = await funded();
    const ids = Array.from({ length: 20 }, (_, i) => `burst-${i}`);
    // One frame after the other without waiting: the first ones are still in the verify pool.
    // Badly signed, so every admitted one goes through the pool and none uses the rate limit.
    // Signed before sending (signing takes milliseconds in the test), so the frames leave together.
    const stranger = Wallet.random();
    const frames = ids.map((id) => JSON.stringify({
      type: 'post', id, path: '/orders', body: w.order({ market_id: MARKET, side: 'bid', price: P, quantity: 100 }, { signer: (m) => stranger.sign(m) }),
    }));
    for (const f of frames) c.send(f);
    const answers = await Promise.all(ids.map((id) => c.next((m) => m.type === 'response' && m.id === id)));
    const busy = answers.filter((m) => m.status === 429);
    expect(busy.length).toBeGreaterThanOrEqual(1);
    for (const m of busy) expect(m.body).toEqual({ ok: false, data: null, error: `Too many requests in flight on this connection: the limit is ${IN_FLIGHT_MAX}.` });
    for (const m of answers.filter((x) => x.status !== 429)) expect(m.body.error).toBe('INVALID_SIGNATURE');
    expect(c.all.filter((m) => m.type === 'response' && ids.includes(m.id))).toHaveLength(ids.length);
    // Once answered, the connection posts again.
    expect((await post(c, '/orders', w.order({ market_id: MARKET, side: 'bid', price: P - 1_000_000, quantity: 100 }))).status).toBe(200);

    const unknown = await post(c, '/withdrawals', {});
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ ok: false, error: 'NOT_FOUND' });
    const not_object = await post(c, '/orders', [1]);
    expect(not_object.status).toBe(400);
    expect(not_object.body).toMatchObject({ ok: false, error: 'INVALID_REQUEST', message: 'body must be a JSON object' });
    c.send({ type: 'post', path: '/orders', body: {} });
    expect((await c.nextType('error')).message).toMatch(/post needs id/);
  });
});
