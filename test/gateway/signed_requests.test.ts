// parseOrder's message forms (built on demand, issue 11) must be exactly the texts of
// src/auth/messages.ts, which the wallet vectors pin; hostile bodies are still refused with their
// codes after the body parser and the field check stopped building key arrays.
import { describe, expect, it } from 'vitest';
import { orderJsonMessage, orderMessage } from '../../src/auth/messages.js';
import { parseJsonObject } from '../../src/gateway/json_object.js';
import { parseCancel, parseOrder } from '../../src/gateway/signed_requests.js';
import { isBodyError, type SignedRequest } from '../../src/gateway/signed_body.js';
import { pooledRequest, releaseRequest, resetRequest } from '../../src/gateway/request_pool.js';
import { emptyRequest, type Request } from '../../src/engine/types.js';
import { Rng } from '../../src/util/prng.js';

const lookup = { marketIndex: (id: string): number => ['ETH-USDC', 'BTC-USDC'].indexOf(id) };
const USER = '0x' + 'Ab'.repeat(20);
const SIG = '0x' + '1f'.repeat(65);

function generatedBody(rng: Rng): Record<string, unknown> {
  const market = rng.chance(0.5);
  const body: Record<string, unknown> = {
    user: USER, market_id: rng.chance(0.5) ? 'ETH-USDC' : 'BTC-USDC', side: rng.chance(0.5) ? 'bid' : 'ask',
    order_type: market ? 'market' : 'limit', time_in_force: ['gtc', 'ioc', 'fok', 'post_only'][rng.int(0, 3)],
    quantity: rng.int(1, 2_000_000_000), nonce: rng.chance(0.1) ? Number.MAX_SAFE_INTEGER : rng.int(0, 2_000_000_000),
    signature: SIG,
  };
  if (!market) body.price = rng.int(1, 2_000_000_000);
  if (rng.chance(0.3)) body.client_order_id = `c${rng.int(0, 99_999)}`;
  if (rng.chance(0.2)) body.stp = ['expire_maker', 'expire_taker', 'expire_both'][rng.int(0, 2)];
  if (rng.chance(0.2)) body.expires_after_ms = rng.int(1, 2_000_000_000_000);
  return body;
}

function parsed(body: Record<string, unknown>): SignedRequest {
  const p = parseOrder(body, lookup);
  if (isBodyError(p)) throw new Error(`refused: ${p.message}`);
  return p;
}

describe('parseOrder message forms', () => {
  it('are the JSON form then the colon form of messages.ts, on generated orders, in either order of asking', () => {
    const rng = new Rng(7);
    for (let i = 0; i < 2000; i++) {
      const body = generatedBody(rng);
      const fields = {
        market_id: body.market_id as string, side: body.side as string, price: (body.price as number | undefined) ?? 0,
        quantity: body.quantity as number, nonce: body.nonce as number, order_type: body.order_type as string,
        time_in_force: body.time_in_force as string, stp: (body.stp as string | undefined) ?? null,
        expires_after_ms: (body.expires_after_ms as number | undefined) ?? null,
      };
      const p = parsed(body);
      expect(p.messages.length).toBe(2);
      const colon_first = rng.chance(0.5);
      if (colon_first) expect(p.messages.at(1)).toBe(orderMessage(fields));
      expect(p.messages.at(0)).toBe(orderJsonMessage(fields));
      expect(p.messages.at(1)).toBe(orderMessage(fields));
      expect(p.messages.at(0)).toBe(p.messages.at(0)); // built once, asked again
      expect(p.messages.at(2)).toBeUndefined();
      expect(p.json_form_only).toBe(body.stp !== undefined || body.expires_after_ms !== undefined);
    }
  });

  it('keeps the wallet vectors\' texts (JSON form of a limit order, colon form with price 0 for a market order)', () => {
    const limit = parsed({
      user: USER, market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 500_000, order_type: 'limit',
      time_in_force: 'gtc', nonce: 7, signature: SIG,
    });
    expect(limit.messages.at(0)).toBe('{"market_id":"ETH-USDC","side":"bid","price":2000000000,"quantity":500000,"order_type":"limit","time_in_force":"gtc","nonce":7}');
    expect(limit.messages.at(1)).toBe('ringbook:order:ETH-USDC:bid:2000000000:500000:7');
    const market = parsed({
      user: USER, market_id: 'ETH-USDC', side: 'ask', quantity: 500_000, order_type: 'market', time_in_force: 'ioc', nonce: 8, signature: SIG,
    });
    expect(market.messages.at(1)).toBe('ringbook:order:ETH-USDC:ask:0:500000:8');
  });
});

describe('hostile bodies', () => {
  const base = '"user":"' + USER + '","market_id":"ETH-USDC","side":"bid","price":1,"quantity":1,"order_type":"limit","time_in_force":"gtc","nonce":1,"signature":"' + SIG + '"';

  function body(text: string): Record<string, unknown> | string {
    const r = parseJsonObject(Buffer.from(text));
    return r.ok ? r.value : r.message;
  }

  it('refuses forbidden keys at any depth, as own members only', () => {
    expect(body(`{${base},"__proto__":{"x":1}}`)).toMatch(/forbidden key "__proto__"/);
    expect(body(`{${base},"a":[{"b":{"constructor":1}}]}`)).toMatch(/forbidden key "constructor"/);
    expect(body('{"prototype":1}')).toMatch(/forbidden key "prototype"/);
    // An inherited enumerable member is no member of the body.
    const proto = Object.prototype as Record<string, unknown>;
    proto.__ringbook_test_inherited = 1;
    try {
      const ok = body(`{${base}}`);
      expect(typeof ok).toBe('object');
      expect(isBodyError(parseOrder(ok as Record<string, unknown>, lookup))).toBe(false);
    } finally {
      delete proto.__ringbook_test_inherited;
    }
  });

  it('answers an unknown member INVALID_REQUEST, and a bad field with its code', () => {
    const unknown = parseOrder(body(`{${base},"surprise":1}`) as Record<string, unknown>, lookup);
    expect(unknown).toEqual({ code: 'INVALID_REQUEST', message: 'unknown field "surprise"' });
    const cancel = parseCancel(body(`{"user":"${USER}","order_id":"1","nonce":1,"signature":"${SIG}","x":2}`) as Record<string, unknown>);
    expect(cancel).toEqual({ code: 'INVALID_REQUEST', message: 'unknown field "x"' });
    const side = parseOrder(body(`{${base.replace('"bid"', '"up"')}}`) as Record<string, unknown>, lookup);
    expect(side).toEqual({ code: 'INVALID_ORDER', message: 'side must be bid or ask' });
    const sig = parseOrder(body(`{${base.replace(SIG, '0x12')}}`) as Record<string, unknown>, lookup);
    expect(isBodyError(sig) && sig.code).toBe('INVALID_SIGNATURE');
    const market = parseOrder(body(`{${base.replace('ETH-USDC', 'DOGE-USDC')}}`) as Record<string, unknown>, lookup);
    expect(isBodyError(market) && market.code).toBe('MARKET_NOT_FOUND');
  });
});

describe('pooled requests (issue 11: a Request per signed request on the front)', () => {
  it('resetRequest gives every field of emptyRequest its value back (a field added to one and not the other fails here)', () => {
    const dirty = emptyRequest() as unknown as Record<string, unknown>;
    for (const k of Object.keys(dirty)) dirty[k] = typeof dirty[k] === 'string' ? 'junk' : 12_345.5;
    resetRequest(dirty as unknown as Request);
    expect(dirty).toEqual(emptyRequest());
    expect(Object.keys(dirty)).toEqual(Object.keys(emptyRequest()));
  });

  it('a given-back request parses the next body clean: nothing of the last one stays', () => {
    const a = parseOrder({ ...JSON.parse(`{"user":"${USER}","market_id":"BTC-USDC","side":"ask","price":7,"quantity":9,"order_type":"limit","time_in_force":"ioc","nonce":5,"signature":"${SIG}","client_order_id":"abc","stp":"expire_both","expires_after_ms":99}`) }, lookup);
    if (isBodyError(a)) throw new Error(a.message);
    releaseRequest(a.request);
    const c = parseCancel({ user: USER, order_id: '17', nonce: 6, signature: SIG });
    if (isBodyError(c)) throw new Error(c.message);
    expect(c.request).toBe(a.request); // reused, as released
    const want = emptyRequest();
    want.kind = c.request.kind;
    want.nonce = 6;
    want.order_id = 17;
    expect(c.request).toEqual(want);
    expect(pooledRequest()).not.toBe(c.request); // not given back: not handed out again
  });
});
