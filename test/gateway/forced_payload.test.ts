// The force-include envelope and payload parser: kind inference, the `kind` member, and every way
// a payload is found bad (which then travels with the entry as its verdict).
import { describe, expect, it } from 'vitest';
import { FORCED_PAYLOAD_BYTES_MAX, forceIncludePayloadHash } from '../../src/auth/messages.js';
import { RequestKind } from '../../src/engine/types.js';
import { Reject } from '../../src/engine/codes.js';
import {
  forceIncludeRequest, parseForceEnvelope, parseForcedPayload, type ForceEnvelope,
} from '../../src/gateway/forced_payload.js';
import { parseReferral } from '../../src/gateway/signed_account_requests.js';
import { isBodyError } from '../../src/gateway/signed_body.js';

const USER = '0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a';
const OTHER = '0x1563915e194d8cfba1943570603f7606a3115508';
const SIG = '0x' + 'ab'.repeat(65);
const markets = { marketIndex: (id: string): number => (id === 'ETH-USDC' ? 0 : -1) };
const assets = new Map([['USDC', { index: 2, onchain_decimals: 6 }]]);

function hexOf(text: string): string {
  return '0x' + Buffer.from(text, 'utf8').toString('hex');
}

function envelope(payload: unknown): ForceEnvelope {
  const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const e = parseForceEnvelope({ user: USER, payload: hexOf(text), nonce: 4, signature: SIG });
  if (isBodyError(e)) throw new Error(e.message);
  return e;
}

describe('parseForceEnvelope', () => {
  it('builds the envelope message over keccak256 of the payload bytes, with the user as sent', () => {
    const upper = '0x19E7E376E7C213B7E7E7E46CC70A5DD086DAFF2A';
    const e = parseForceEnvelope({ user: upper, payload: '0x7b7d', nonce: 9, signature: SIG });
    expect(isBodyError(e)).toBe(false);
    if (isBodyError(e)) return;
    expect(e.user).toBe(USER);
    expect(e.payload_hash).toBe(forceIncludePayloadHash('0x7b7d'));
    expect(e.message).toBe(`ringbook:force-include:${upper}:${e.payload_hash}:9`);
  });

  it.each([
    [{ user: 'x', payload: '0x7b7d', nonce: 1, signature: SIG }, /user/],
    [{ user: USER, payload: '7b7d', nonce: 1, signature: SIG }, /payload/],
    [{ user: USER, payload: '0x7b7', nonce: 1, signature: SIG }, /whole bytes/],
    [{ user: USER, payload: '0x' + '00'.repeat(FORCED_PAYLOAD_BYTES_MAX + 1), nonce: 1, signature: SIG }, /at most 4096 bytes/],
    [{ user: USER, payload: '0x7b7d', nonce: -1, signature: SIG }, /nonce/],
    [{ user: USER, payload: '0x7b7d', nonce: 1, signature: '0x12' }, /signature/],
    [{ user: USER, payload: '0x7b7d', nonce: 1, signature: SIG, extra: 1 }, /unknown field/],
  ])('refuses %j', (body, pattern) => {
    const e = parseForceEnvelope(body as Record<string, unknown>);
    expect(isBodyError(e) && pattern.test(e.message)).toBe(true);
  });
});

describe('parseForcedPayload', () => {
  const order = { user: USER, market_id: 'ETH-USDC', side: 'bid', price: 1_000_000, quantity: 100, order_type: 'limit', time_in_force: 'gtc', nonce: 5, signature: SIG };
  it.each([
    ['order', order, RequestKind.PLACE],
    ['cancel', { user: USER, order_id: '7', client_order_id: '', nonce: 5, signature: SIG }, RequestKind.CANCEL],
    ['amend', { user: USER, order_id: 7, price: 1_000_000, quantity: 100, nonce: 5, signature: SIG }, RequestKind.AMEND],
    ['cancel_all', { user: USER, nonce: 5, signature: SIG }, RequestKind.CANCEL_ALL],
    ['withdrawal', { address: USER, asset: 'USDC', amount: '5', nonce: 5, signature: SIG }, RequestKind.WITHDRAW],
    ['referral', { referred: USER, referrer: OTHER, nonce: 5, signature: SIG }, RequestKind.REFER],
  ])('infers %s from the body shape', (name, body, kind) => {
    const p = parseForcedPayload(envelope(body), markets, assets);
    expect([p.kind_name, p.request.kind, p.request.nonce, p.verdict]).toEqual([name, kind, 5, Reject.NONE]);
    expect(p.signed?.address).toBe(USER);
    if (name === 'referral') expect(p.referrer).toBe(OTHER);
    const r = forceIncludeRequest(envelope(body), p, Reject.NONE, RequestKind.FORCE_INCLUDE);
    expect([r.kind, r.nonce, r.inner_kind, r.inner_nonce]).toEqual([RequestKind.FORCE_INCLUDE, 4, kind, 5]);
  });

  it('honours an explicit kind member (cancel-all vs cancel shapes are otherwise inferred)', () => {
    const p = parseForcedPayload(envelope({ kind: 'cancel_all', user: USER, market_id: 'ETH-USDC', nonce: 5, signature: SIG }), markets, assets);
    expect([p.kind_name, p.request.kind, p.request.market]).toEqual(['cancel_all', RequestKind.CANCEL_ALL, 0]);
  });

  it.each([
    ['not UTF-8 JSON', '{"user":'],
    ['not an object', '[1,2]'],
    ['an unknown kind', JSON.stringify({ kind: 'deposit', user: USER })],
    ['an order with an unknown market', JSON.stringify({ ...order, market_id: 'DOGE-USDC' })],
    ['an order with a fractional price', JSON.stringify({ ...order, price: 1.5 })],
    // The direct endpoint's strict parser (json_object.ts) refuses these; a forced payload must
    // meet the same rules, not a laxer JSON.parse that rounds 1000000.00000000001 to 1000000.
    ['an order with a price that only rounds to an integer', JSON.stringify(order).replace('"price":1000000', '"price":1000000.00000000001')],
    ['an order with a forbidden key', JSON.stringify(order).replace('{', '{"__proto__":{"x":1},')],
  ])('finds %s malformed', (_what, text) => {
    const p = parseForcedPayload(envelope(text), markets, assets);
    expect(p.verdict).toBe(Reject.FORCED_PAYLOAD_MALFORMED);
    expect(p.signed).toBeNull();
    // A readable order keeps its kind (the entry shows what was attempted); garbage, and text
    // the body rules refuse before reading it, has none.
    const readable = text.includes('market_id') && !text.includes('00000000001') && !text.includes('__proto__');
    expect(p.request.kind).toBe(readable ? RequestKind.PLACE : 0);
  });

  it('refuses an order payload carrying stp or expires_after_ms as malformed (the inbox keeps plain orders)', () => {
    for (const extra of [{ stp: 'expire_taker' }, { expires_after_ms: 1_764_000_000_000 }]) {
      const p = parseForcedPayload(envelope({ ...order, ...extra }), markets, assets);
      expect(p.verdict).toBe(Reject.FORCED_PAYLOAD_MALFORMED);
      expect(p.request.kind).toBe(RequestKind.PLACE);
    }
  });

  it('finds a payload of another user a signer mismatch', () => {
    const p = parseForcedPayload(envelope({ ...order, user: OTHER }), markets, assets);
    expect(p.verdict).toBe(Reject.FORCED_SIGNER_MISMATCH);
  });
});

describe('parseReferral (POST /referral/register and forced referrals)', () => {
  const good = { referred: USER, referrer: OTHER, nonce: 3, signature: SIG };
  it('reads a well-formed body: the referred user signs, the referrer address travels lowercase', () => {
    const p = parseReferral({ ...good, referrer: OTHER.toUpperCase().replace('0X', '0x') });
    expect(isBodyError(p)).toBe(false);
    if (isBodyError(p)) return;
    expect([p.address, p.referrer, p.request.kind, p.request.nonce]).toEqual([USER, OTHER, RequestKind.REFER, 3]);
    expect(p.messages).toEqual([`ringbook:referral:${USER}:${OTHER.toUpperCase().replace('0X', '0x')}:3`]);
  });

  it.each([
    [{ referrer: OTHER, nonce: 3, signature: SIG }, 'INVALID_REQUEST', /referred is required/],
    [{ referred: USER, nonce: 3, signature: SIG }, 'INVALID_REQUEST', /referrer is required/],
    [{ ...good, referred: 42 }, 'INVALID_REQUEST', /referred must be/],
    [{ ...good, referrer: '0x12' }, 'INVALID_REQUEST', /referrer must be/],
    [{ ...good, nonce: '3' }, 'INVALID_REQUEST', /nonce must be an integer/],
    [{ ...good, nonce: -1 }, 'INVALID_REQUEST', /non-negative/],
    [{ ...good, nonce: 2 ** 53 }, 'INVALID_REQUEST', /2\^53/],
    [{ ...good, signature: '0xabc' }, 'INVALID_SIGNATURE', /65 bytes/],
    [{ ...good, code: 'x' }, 'INVALID_REQUEST', /unknown field/],
  ])('refuses %j', (body, code, message) => {
    const p = parseReferral(body as Record<string, unknown>);
    expect(isBodyError(p)).toBe(true);
    if (!isBodyError(p)) return;
    expect(p.code).toBe(code);
    expect(p.message).toMatch(message);
  });
});

describe('parseForceEnvelope: missing and wrongly typed fields', () => {
  it.each([
    [{ payload: '0x7b7d', nonce: 1, signature: SIG }, /user/],
    [{ user: USER, nonce: 1, signature: SIG }, /payload/],
    [{ user: USER, payload: '0x', nonce: 1, signature: SIG }, /payload/],
    [{ user: USER, payload: 7, nonce: 1, signature: SIG }, /payload/],
    [{ user: USER, payload: '0x7b7d', signature: SIG }, /nonce/],
    [{ user: USER, payload: '0x7b7d', nonce: '1', signature: SIG }, /nonce/],
    [{ user: USER, payload: '0x7b7d', nonce: 2 ** 53, signature: SIG }, /nonce/],
    [{ user: USER, payload: '0x7b7d', nonce: 1 }, /signature/],
  ])('refuses %j', (body, pattern) => {
    const e = parseForceEnvelope(body as Record<string, unknown>);
    expect(isBodyError(e) && pattern.test(e.message)).toBe(true);
  });
});
