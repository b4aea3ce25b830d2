// WebSocket connection rules on the real server with short timings from config: the challenge
// flow (expiry, single use, grace period, failure count), ping/pong and the idle close, malformed
// and unknown messages answered without closing, and the per-connection and per-IP limits.
// No "closed within N ms" bound and no sleep standing in for "the deadline has passed": a test
// waits for the server's own clock (pong timestamps) or for a witness connection whose deadline
// is later being closed by the same sweep (hub.ts sweeps every connection each period), so a
// loaded 2-core machine can only make it slower, never fail it. Wait bounds are safety limits.
import { describe, expect, it } from 'vitest';
import { Wallet, type StartedServer } from '../server/harness.js';
import { ISO, sleep, WsClient, wsServerPerFile } from './client.js';

// Long enough that a loaded CI machine answers a challenge within it (at 600 ms the wrong-signer
// loop once saw its challenge expire, UNAUTHORIZED, before its auth arrived); the expiry test sleeps past it,
// then authenticates within the grace period, which is therefore the longer; an authenticated
// connection outlives the grace period, silent, within the idle timeout, the longest.
const CHALLENGE_TTL_MS = 2_000;
const AUTH_GRACE_MS = 3_000;
const IDLE_MS = 4_000;
const SUBSCRIPTIONS_MAX = 4;
const CONNECTIONS_PER_IP_MAX = 12;
const MESSAGE_BYTES_MAX = 2048;

let s: StartedServer;
const { connect, closeAll } = wsServerPerFile((started) => {
  s = started;
}, {
  config: {
    limits: {
      ws_challenge_ttl_ms: CHALLENGE_TTL_MS,
      ws_auth_grace_ms: AUTH_GRACE_MS,
      ws_idle_timeout_ms: IDLE_MS,
      ws_subscriptions_per_connection_max: SUBSCRIPTIONS_MAX,
      ws_connections_per_ip_max: CONNECTIONS_PER_IP_MAX,
      ws_message_bytes_max: MESSAGE_BYTES_MAX,
    },
  },
});

function challengeText(nonce: string): string {
  return `Ringbook Exchange\nNonce: ${nonce}`;
}

/** Pings a safety-bounded number of times; each wait is what the server's clock still lacks. */
const SERVER_CLOCK_PINGS_MAX = 100;

/** Waits until the server's clock (its pong timestamps) is past `epoch_ms`, pinging on `c`. */
async function untilServerTimePasses(c: WsClient, epoch_ms: number): Promise<void> {
  for (let i = 0; i < SERVER_CLOCK_PINGS_MAX; i++) {
    const server_ms = Date.parse((await c.request({ type: 'ping' }, 'pong')).timestamp as string);
    if (server_ms > epoch_ms) return;
    await sleep(epoch_ms - server_ms + 1);
  }
  throw new Error(`the server's clock did not pass ${new Date(epoch_ms).toISOString()} in ${SERVER_CLOCK_PINGS_MAX} pings`);
}

describe('challenge auth', () => {
  it('issues a random nonce with an expiry about the configured TTL ahead', async () => {
    const w = Wallet.random();
    const c = await connect();
    const before = Date.now();
    const ch1 = await c.request({ type: 'request_challenge', address: w.address, request_id: 'ch-1' }, 'challenge');
    expect(ch1).toEqual({ type: 'challenge', nonce: expect.stringMatching(/^[0-9a-f]{32}$/), expires_at: expect.stringMatching(ISO), request_id: 'ch-1' });
    const expires = Date.parse(ch1.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + CHALLENGE_TTL_MS - 5);
    expect(expires).toBeLessThanOrEqual(Date.now() + CHALLENGE_TTL_MS + 5);
    const ch2 = await c.request({ type: 'request_challenge', address: w.address }, 'challenge');
    expect(ch2.nonce).not.toBe(ch1.nonce);
    // The newer challenge replaced the older one.
    const stale = await c.request({ type: 'auth', address: w.address, signature: w.sign(challengeText(ch1.nonce)) }, 'auth_success');
    expect(stale).toMatchObject({ type: 'error', code: 'INVALID_SIGNATURE' });
  });

  it('authenticates with a personal_sign over "Ringbook Exchange\\nNonce: <nonce>" and accepts v = 0/1', async () => {
    const w = Wallet.random();
    const c = await connect();
    const ch = await c.request({ type: 'request_challenge', address: '0x' + w.address.slice(2).toUpperCase() }, 'challenge');
    const ok = await c.request({ type: 'auth', address: w.address, signature: w.sign(challengeText(ch.nonce), { v_base: 0 }), request_id: 'a1' }, 'auth_success');
    expect(ok).toEqual({ type: 'auth_success', address: w.address, request_id: 'a1' });
    // Authenticated once: no second challenge on this connection.
    const again = await c.request({ type: 'request_challenge', address: w.address }, 'challenge');
    expect(again).toMatchObject({ type: 'error', code: 'INVALID_REQUEST' });
    // Still authenticated past the grace period: a witness that asked for its challenge after c
    // did is closed by a sweep past its own (later) grace deadline, so that sweep also saw c's.
    const witness = await connect();
    await witness.request({ type: 'request_challenge', address: w.address }, 'challenge');
    expect((await witness.waitClose(AUTH_GRACE_MS + 10_000)).code).toBe(4001);
    expect((await c.request({ type: 'subscribe', channels: [`orders:${w.address}`] }, 'subscribed')).type).toBe('subscribed');
    expect(c.closed).toBeNull();
  });

  it('refuses wrong signers, eth_sign, high-s and another address', async () => {
    const w = Wallet.random();
    const other = Wallet.random();
    for (const bad of [
      (n: string) => other.sign(challengeText(n)),
      (n: string) => w.signRawKeccak(challengeText(n)),
      (n: string) => w.sign(challengeText(n), { high_s: true }),
      (n: string) => w.sign(`Ringbook Exchange\nNonce: ${n}x`),
    ]) {
      const c = await connect();
      const ch = await c.request({ type: 'request_challenge', address: w.address }, 'challenge');
      const e = await c.request({ type: 'auth', address: w.address, signature: bad(ch.nonce) }, 'auth_success');
      expect(e).toMatchObject({ type: 'error', code: 'INVALID_SIGNATURE' });
      c.close();
    }
    const c = await connect();
    await c.request({ type: 'request_challenge', address: w.address }, 'challenge');
    const e = await c.request({ type: 'auth', address: other.address, signature: other.sign(challengeText('whatever')) }, 'auth_success');
    expect(e).toMatchObject({ type: 'error', code: 'UNAUTHORIZED', message: expect.stringContaining(w.address) });
  });

  it('makes a challenge single-use: the same signature cannot authenticate twice or on another connection', async () => {
    const w = Wallet.random();
    const c1 = await connect();
    const ch = await c1.request({ type: 'request_challenge', address: w.address }, 'challenge');
    const sig = w.sign(challengeText(ch.nonce));
    // A wrong first attempt consumes the challenge...
    const wrong = await c1.request({ type: 'auth', address: w.address, signature: Wallet.random().sign(challengeText(ch.nonce)) }, 'auth_success');
    expect(wrong).toMatchObject({ type: 'error', code: 'INVALID_SIGNATURE' });
    // ...so the right signature over the same nonce is refused afterwards.
    const reuse = await c1.request({ type: 'auth', address: w.address, signature: sig }, 'auth_success');
    expect(reuse).toMatchObject({ type: 'error', code: 'UNAUTHORIZED', message: expect.stringContaining('single-use') });
    // Another connection cannot use it either (its own challenge has another nonce).
    const c2 = await connect();
    const none = await c2.request({ type: 'auth', address: w.address, signature: sig }, 'auth_success');
    expect(none).toMatchObject({ type: 'error', code: 'UNAUTHORIZED' });
    await c2.request({ type: 'request_challenge', address: w.address }, 'challenge');
    const replay = await c2.request({ type: 'auth', address: w.address, signature: sig }, 'auth_success');
    expect(replay).toMatchObject({ type: 'error', code: 'INVALID_SIGNATURE' });
    // A successful auth consumes it too.
    const c3 = await connect();
    await c3.authenticate(w);
    const after = await c3.request({ type: 'auth', address: w.address, signature: sig }, 'auth_success');
    expect(after).toMatchObject({ type: 'error', code: 'INVALID_REQUEST' });
  });

  it('refuses an expired challenge', async () => {
    const w = Wallet.random();
    const c = await connect();
    const ch = await c.request({ type: 'request_challenge', address: w.address }, 'challenge');
    // Until the server's clock is past expires_at (then as much of the grace period as possible
    // is left for the fresh challenge below).
    await untilServerTimePasses(c, Date.parse(ch.expires_at as string));
    const e = await c.request({ type: 'auth', address: w.address, signature: w.sign(challengeText(ch.nonce)) }, 'auth_success');
    expect(e).toMatchObject({ type: 'error', code: 'UNAUTHORIZED', message: expect.stringContaining('expired') });
    // A fresh challenge within the grace period still works.
    await c.authenticate(w);
    expect(c.closed).toBeNull();
  });

  it('closes with a fatal AUTH_TIMEOUT a connection not authenticated within the grace period', async () => {
    const w = Wallet.random();
    const c = await connect();
    const quiet = await connect(); // never asks for a challenge: no grace deadline
    const t0 = Date.now();
    await c.request({ type: 'request_challenge', address: w.address }, 'challenge');
    // Keep it busy (not idle) with pings and new challenges: neither moves the deadline.
    const pinger = setInterval(() => {
      if (!c.closed) c.send({ type: 'request_challenge', address: w.address });
      if (!quiet.closed) quiet.send({ type: 'ping' });
    }, 300);
    try {
      const fatal = await c.next((m) => m.type === 'error', AUTH_GRACE_MS + 5000);
      expect(fatal).toMatchObject({ type: 'error', code: 'AUTH_TIMEOUT', request_id: expect.any(String) });
      const closed = await c.waitClose();
      expect(closed.code).toBe(4001);
      // Not before its deadline (how late after it is the sweep's and the machine's business;
      // the wait above bounds it).
      expect(closed.at_ms - t0).toBeGreaterThanOrEqual(AUTH_GRACE_MS);
      expect(quiet.closed).toBeNull();
    } finally {
      clearInterval(pinger);
    }
  });

  it('closes with a fatal AUTH_TIMEOUT after three failed auths', async () => {
    const w = Wallet.random();
    const c = await connect();
    for (let i = 1; i <= 3; i++) {
      const ch = await c.request({ type: 'request_challenge', address: w.address }, 'challenge');
      const e = await c.request({ type: 'auth', address: w.address, signature: Wallet.random().sign(challengeText(ch.nonce)) }, 'auth_success');
      expect(e.type).toBe('error');
      expect(e.code).toBe(i < 3 ? 'INVALID_SIGNATURE' : 'AUTH_TIMEOUT');
    }
    expect((await c.waitClose(2000)).code).toBe(4001);
  });
});

describe('keepalive', () => {
  it('answers ping with pong and an ISO timestamp', async () => {
    const c = await connect();
    const before = Date.now();
    const p = await c.request({ type: 'ping' }, 'pong');
    const after = Date.now();
    expect(p).toEqual({ type: 'pong', timestamp: expect.stringMatching(ISO) });
    // The server's clock read between the request and its answer (one machine, one wall clock).
    expect(Date.parse(p.timestamp)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(p.timestamp)).toBeLessThanOrEqual(after);
    expect(await c.request({ type: 'ping', request_id: 'k-1' }, 'pong')).toMatchObject({ type: 'pong', request_id: 'k-1' });
  });

  it('closes a connection idle for the configured time and keeps a pinging one open', async () => {
    const idle = await connect();
    const busy = await connect();
    const pinger = setInterval(() => busy.send({ type: 'ping' }), 800);
    // Opened after busy: its idle close comes from a sweep past busy's own idle deadline.
    const witness = await connect();
    try {
      const closed = await idle.waitClose(IDLE_MS + 10_000);
      expect(closed.code).toBe(4000);
      expect(closed.at_ms - idle.opened_ms).toBeGreaterThanOrEqual(IDLE_MS);
      expect((await witness.waitClose(IDLE_MS + 10_000)).code).toBe(4000);
      // A round trip on busy after that sweep: an idle close would have ended it instead.
      busy.send({ type: 'ping', request_id: 'still' });
      expect(await busy.next((m) => m.request_id === 'still')).toMatchObject({ type: 'pong', request_id: 'still' });
      expect(busy.closed).toBeNull();
      expect(busy.all.filter((m) => m.type === 'pong').length).toBeGreaterThanOrEqual(3);
    } finally {
      clearInterval(pinger);
    }
  });
});

describe('bad messages', () => {
  it('answers malformed JSON, non-objects, unknown types and bad fields with INVALID_REQUEST without closing', async () => {
    const c = await connect();
    const cases: [unknown, RegExp][] = [
      ['{"type": "ping"', /not valid JSON/],
      ['not json at all', /not valid JSON/],
      ['[1,2,3]', /JSON object/],
      ['"ping"', /JSON object/],
      [{ channels: ['book:ETH-USDC'] }, /no type/],
      [{ type: 'hello' }, /unknown message type "hello"/],
      [{ type: 42 }, /unknown message type 42/],
      [{ type: 'subscribe' }, /channels/],
      [{ type: 'subscribe', channels: [] }, /channels/],
      [{ type: 'subscribe', channels: 'book:ETH-USDC' }, /channels/],
      [{ type: 'subscribe', channels: ['book:NOPE-USDC'] }, /unknown market "NOPE-USDC"/],
      [{ type: 'subscribe', channels: ['candles:ETH-USDC'] }, /unknown channel/],
      [{ type: 'subscribe', channels: [42] }, /must be a string/],
      [{ type: 'subscribe', channels: ['fills:0x1234'] }, /address/],
      [{ type: 'unsubscribe', channels: ['weird'] }, /unknown channel/],
      [{ type: 'request_challenge', address: 'bob' }, /address/],
      [{ type: 'ping', request_id: { x: 1 } }, /request_id/],
      ['{"type":"ping","__proto__":{"polluted":true}}', /./],
    ];
    for (const [msg, re] of cases) {
      c.send(msg);
      const e = await c.nextType('error');
      expect(e.code, JSON.stringify(msg)).toBe('INVALID_REQUEST');
      expect(e.message).toMatch(re);
      expect(typeof e.request_id).toBe('string');
    }
    // A binary frame holding JSON is read like a text frame.
    c.ws.send(Buffer.from(JSON.stringify({ type: 'ping', request_id: 'bin' })), { binary: true });
    expect(await c.nextType('pong')).toMatchObject({ request_id: 'bin' });
    expect(c.closed).toBeNull();
    expect(await c.request({ type: 'subscribe', channels: ['book:ETH-USDC', 'nope'] }, 'subscribed')).toMatchObject({ type: 'error' });
    expect(await c.nextType('subscribed')).toEqual({ type: 'subscribed', channels: ['book:ETH-USDC'] });
    expect(await c.nextType('book_snapshot')).toMatchObject({ market_id: 'ETH-USDC' });
    expect(await c.request({ type: 'unsubscribe', channels: ['book:ETH-USDC', 'trades:ETH-USDC'] }, 'unsubscribed')).toEqual({
      type: 'unsubscribed', channels: ['book:ETH-USDC', 'trades:ETH-USDC'],
    });
  });

  it('closes a connection that sends a frame over the message size limit', async () => {
    const c = await connect();
    c.send({ type: 'ping', pad: 'x'.repeat(MESSAGE_BYTES_MAX) });
    const closed = await c.waitClose(3000);
    expect([1006, 1009]).toContain(closed.code);
  });
});

/** Attempts of a connect refused with 429 while the server has not yet seen a close. */
const CONNECT_ATTEMPTS_MAX = 200;

/** A new client, retried while refused with 429 (a slot not yet freed), the attempts bounded. */
async function connectOnceFreed(): Promise<WsClient> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await connect();
    } catch (e) {
      if ((e as { status?: number }).status !== 429 || attempt >= CONNECT_ATTEMPTS_MAX) throw e;
      await new Promise((r) => setImmediate(r));
    }
  }
}

describe('limits', () => {
  it('caps subscriptions per connection', async () => {
    const c = await connect();
    const channels = ['book:ETH-USDC', 'trades:ETH-USDC', 'book:BTC-USDC', 'trades:BTC-USDC', 'book:eth-usdc'];
    c.send({ type: 'subscribe', channels });
    // book:eth-usdc is the same channel as book:ETH-USDC: four distinct channels fit.
    const sub = await c.nextType('subscribed');
    expect(sub.channels).toEqual(['book:ETH-USDC', 'trades:ETH-USDC', 'book:BTC-USDC', 'trades:BTC-USDC']);
    const w = Wallet.random();
    await c.authenticate(w);
    const e = await c.request({ type: 'subscribe', channels: [`fills:${w.address}`] }, 'subscribed');
    expect(e).toMatchObject({ type: 'error', code: 'INVALID_REQUEST', message: expect.stringContaining(`at most ${SUBSCRIPTIONS_MAX}`) });
    await c.request({ type: 'unsubscribe', channels: ['trades:BTC-USDC'] }, 'unsubscribed');
    expect(await c.request({ type: 'subscribe', channels: [`fills:${w.address}`] }, 'subscribed')).toMatchObject({ type: 'subscribed' });
  });

  it('caps connections per IP with HTTP 429 and frees the slot on close', async () => {
    closeAll();
    // The server frees the closed connections' slots when it sees their closes: a refused connect
    // is tried again (bounded) instead of sleeping first. Twelve of ours open means every slot of
    // the earlier clients is free, so the thirteenth's 429 is the cap.
    const open: WsClient[] = [];
    for (let i = 0; i < CONNECTIONS_PER_IP_MAX; i++) open.push(await connectOnceFreed());
    await expect(WsClient.connect(s.url)).rejects.toMatchObject({ status: 429 });
    open[0].close();
    await open[0].waitClose();
    const again = await connectOnceFreed();
    expect((await again.request({ type: 'ping' }, 'pong')).type).toBe('pong');
  });
});
