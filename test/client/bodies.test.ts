// The SDK's signed bodies, referral registration and forced-inclusion payloads/envelopes, with no
// server: message texts, signatures (recovered), payload hex, kind inference, nonce ordering, and
// the client methods' requests through a fake fetch.
import { keccak_256 } from '@noble/hashes/sha3.js';
import { describe, expect, it } from 'vitest';
import { eip191Hash } from '../../src/auth/eip191.js';
import { recoverAddress } from '../../src/auth/recover.js';
import { parseSignatureHex } from '../../src/auth/signature_rules.js';
import {
  amendBody, cancelAllBody, cancelBody, decodeForcedPayload, DuplicateNonceError, encodeForcedPayload, FORCED_PAYLOAD_BYTES_MAX,
  forcedEnvelope, forcedRequestBody, forcedResultError, forceIncludeBody, forceIncludeMessage, inferForcedKind, InvalidReferralError,
  InvalidSignatureError, MonotonicNonce, NotFoundError, orderBody, referralBody, referralMessage, ReferralExistsError, RingbookClient,
  Wallet, withdrawalBody, type ForcedRequest,
} from '../../src/client/index.js';
import { err, fakeFetch, ok } from './helpers.js';

const TEST_KEY = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const w = new Wallet(TEST_KEY);
const REFERRER = '0x1111111111111111111111111111111111111111';

function signer(text: string, signature: unknown): string | null {
  const sig = parseSignatureHex(signature);
  return sig ? recoverAddress(eip191Hash(text), sig) : null;
}

function hexToText(hex: string): string {
  return new TextDecoder().decode(Buffer.from(hex.slice(2), 'hex'));
}

describe('signed bodies (the same builders the client methods use)', () => {
  it('reproduce the docs/api.md worked examples, in the documented key order', () => {
    const o = orderBody(w, { market_id: 'ETH-USDC', side: 'bid', price: 2000010000, quantity: 300 }, 1);
    expect(Object.keys(o)).toEqual(['user', 'market_id', 'side', 'price', 'quantity', 'order_type', 'time_in_force', 'nonce', 'signature']);
    expect(o.signature).toBe('0x2f49ce1524d743c5c0f1a66e16dd97428f6fa14e0f45990cbc5567adeb3974b049519e6c017cd4dda3977da9786124419c7808eae02d9a1351f790ffa2a3fd171c');
    expect(cancelBody(w, { order_id: 17 }, 3)).toEqual({
      user: w.address, order_id: '17', client_order_id: '', nonce: 3,
      signature: '0x3b6207cd0efb188383584c13a5976777756bfd4c5eda00a0defae0bd124d9957660b46719b222d8e8e409fd03a146e56f63ca7aa6ef4741a5e55db4d112f51301b',
    });
    expect(amendBody(w, { order_id: 17, price: 1999990000, quantity: 200 }, 5).signature).toBe(
      '0x153faa945c9e6c866b7ba3c4a0f4c8b0cf64be2916926047b45f7c4f924fcb7c5376f58b2484004fd149c449ff5112959e85599b53b507d8b4fddfd9df2a5e501c',
    );
    expect(cancelAllBody(w, undefined, 6)).toEqual({
      user: w.address, nonce: 6,
      signature: '0xa519f4a49f0cdb23dd7386ec143ee14d9682ed434dfb710ef707c6262835260337bd1aee1aff63f9d33d7a0b51391afcfa69ef8f923eb092b289f56f790df9c11b',
    });
    expect(withdrawalBody(w, { asset: 'ETH', amount: 500000000000000000n }, 7)).toEqual({
      address: w.address, asset: 'ETH', amount: '500000000000000000', nonce: 7,
      signature: '0x35936a9669d6a7b4fdd3a6425ad894dc6f2b829fa5985f2bd2924a59b35810d3295deae88bacf422a38368a12b2ff9b341b876c8d118ab2d3fe95e59a8b8e46b1c',
    });
  });

  it('reproduce docs/api.md worked examples 8 (referral) and 9 (force-include)', () => {
    const referrer = '0x7f7ba1194054594df20630571374321b25d8c1e0';
    expect(referralBody(w, referrer, 8)).toEqual({
      referred: w.address, referrer, nonce: 8,
      signature: '0xb5d30c27819465c7e0d27fafdef4f55c2d17eeabe25c573c629622c791145ead0fd93ac58ff99dc1faebdd626e3a62be4b4152c4e1dfe8e4630873286ba8e09c1b',
    });
    const { envelope, body } = forcedEnvelope(w, { kind: 'cancel_all' }, 9);
    expect(body.signature).toBe('0x2598784ba0ac1f1554fceb1d6fc5a135ac65bb02e067bb375042d38ed67447114602e66a2e46059972b3733f1d64f039b56a1df1a307bc6ec28b756cb59299741c');
    expect(hexToText(envelope.payload as string)).toBe(
      '{"kind":"cancel_all","user":"0x2c7536e3605d9c16a7a3d7b1898e529396a65c23","nonce":10,"signature":"0x2598784ba0ac1f1554fceb1d6fc5a135ac65bb02e067bb375042d38ed67447114602e66a2e46059972b3733f1d64f039b56a1df1a307bc6ec28b756cb59299741c"}',
    );
    expect(forceIncludeMessage({ user: w.address, payload: envelope.payload as string, nonce: 9 })).toBe(
      'ringbook:force-include:0x2c7536e3605d9c16a7a3d7b1898e529396a65c23:0x8f4d3f081da2dc45e2ee32cfbed5c2876579028fa8a578fc558bb2f7e9907613:9',
    );
    expect(envelope.signature).toBe('0x1a5cd7cef285679ae958e2f613e63b031b6a8e89046b8bafb02ee0a50565b2064d39325fe2469041726066188f8af99969c0d7860569b95d818a07eedd47c6621b');
  });

  it('market orders carry no price; bad inputs throw before anything is signed', () => {
    const m = orderBody(w, { market_id: 'ETH-USDC', side: 'ask', quantity: 100, order_type: 'market' }, 9);
    expect('price' in m).toBe(false);
    expect(m.time_in_force).toBe('ioc');
    expect(cancelBody(w, {}, 1)).toMatchObject({ order_id: '', client_order_id: '' }); // the server refuses it, as before
    expect(() => withdrawalBody(w, { asset: 'ETH', amount: '1.5' }, 1)).toThrow(TypeError);
  });

  it('referral: signed by the referred user over ringbook:referral:{referred}:{referrer}:{nonce}, addresses as sent', () => {
    const b = referralBody(w, REFERRER.toUpperCase().replace('0X', '0x'), 42);
    expect(b).toMatchObject({ referred: w.address, referrer: REFERRER, nonce: 42 });
    expect(Object.keys(b)).toEqual(['referred', 'referrer', 'nonce', 'signature']);
    const text = `ringbook:referral:${w.address}:${REFERRER}:42`;
    expect(referralMessage({ referred: w.address, referrer: REFERRER, nonce: 42 })).toBe(text);
    expect(signer(text, b.signature)).toBe(w.address);
    expect(w.signReferral({ referred: w.address, referrer: REFERRER, nonce: 42 })).toBe(b.signature);
    expect(() => referralBody(w, '0x1234', 1)).toThrow(TypeError);
  });
});

describe('forced-inclusion payloads', () => {
  it('infers the kind with the server rules, in their order', () => {
    expect(inferForcedKind({ referred: 'a', referrer: 'b', nonce: 1 })).toBe('referral');
    expect(inferForcedKind({ address: 'a', asset: 'ETH', amount: '1' })).toBe('withdrawal');
    expect(inferForcedKind({ user: 'a', market_id: 'ETH-USDC', side: 'bid', price: 1, quantity: 1 })).toBe('order');
    expect(inferForcedKind({ user: 'a', order_id: '1', price: 1, quantity: 1 })).toBe('amend');
    expect(inferForcedKind({ user: 'a', order_id: '1', client_order_id: '' })).toBe('cancel');
    expect(inferForcedKind({ user: 'a', client_order_id: 'x' })).toBe('cancel');
    expect(inferForcedKind({ user: 'a', market_id: 'ETH-USDC' })).toBe('cancel_all');
    expect(inferForcedKind({ user: 'a' })).toBe('cancel_all');
    // The builders' bodies infer to their own kind.
    const reqs: ForcedRequest[] = [
      { kind: 'order', market_id: 'ETH-USDC', side: 'bid', price: 2000000000, quantity: 100 },
      { kind: 'cancel', client_order_id: 'x' },
      { kind: 'amend', order_id: 5, price: 2000000000, quantity: 100 },
      { kind: 'cancel_all', market_id: 'ETH-USDC' },
      { kind: 'withdrawal', asset: 'USDC', amount: 5 },
      { kind: 'referral', referrer: REFERRER },
    ];
    for (const r of reqs) expect(inferForcedKind(forcedRequestBody(w, r, 3)), r.kind).toBe(r.kind);
  });

  it('payload = 0x hex of the compact UTF-8 JSON, kind first (or absent), at most 4096 bytes', () => {
    const body = cancelAllBody(w, 'ETH-USDC', 8);
    const hex = encodeForcedPayload(body);
    expect(hex).toMatch(/^0x([0-9a-f]{2})+$/);
    expect(hexToText(hex)).toBe(JSON.stringify({ kind: 'cancel_all', ...body }));
    expect(decodeForcedPayload(hex)).toEqual({ kind: 'cancel_all', ...body });
    expect(hexToText(encodeForcedPayload(body, { kind: false }))).toBe(JSON.stringify(body));
    expect(decodeForcedPayload(encodeForcedPayload(body, { kind: 'cancel' })).kind).toBe('cancel');
    // A body that already names its kind keeps it (moved first).
    expect(Object.keys(decodeForcedPayload(encodeForcedPayload({ ...body, kind: 'cancel_all' })))[0]).toBe('kind');
    expect(() => encodeForcedPayload(body, { kind: 'nope' as never })).toThrow(TypeError);
    const big = { user: w.address, client_order_id: 'x'.repeat(FORCED_PAYLOAD_BYTES_MAX) };
    expect(() => encodeForcedPayload(big)).toThrow(RangeError);
    expect(() => decodeForcedPayload('0x7b')).toThrow();
    expect(() => decodeForcedPayload('0xzz')).toThrow(TypeError);
  });

  it('envelope: signed by user over ringbook:force-include:{user}:{keccak256(payload bytes)}:{nonce}', () => {
    const payload = encodeForcedPayload(cancelAllBody(w, undefined, 11));
    const env = forceIncludeBody(w, payload.toUpperCase().replace('0X', '0x'), 10);
    expect(Object.keys(env)).toEqual(['user', 'payload', 'nonce', 'signature']);
    expect(env.payload).toBe(payload); // canonical lowercase hex
    const hash = '0x' + Buffer.from(keccak_256(Buffer.from(payload.slice(2), 'hex'))).toString('hex');
    const text = `ringbook:force-include:${w.address}:${hash}:10`;
    expect(forceIncludeMessage({ user: w.address, payload, nonce: 10 })).toBe(text);
    expect(signer(text, env.signature)).toBe(w.address);
    expect(w.signForceInclude({ user: w.address, payload, nonce: 10 })).toBe(env.signature);
    // Envelope nonces are their own sequence: any envelope nonce wraps the payload signed at 11.
    for (const n of [11, 12, 3]) expect(signer(forceIncludeMessage({ user: w.address, payload, nonce: n }), forceIncludeBody(w, payload, n).signature)).toBe(w.address);
    // An unreadable payload is not the client's to judge (the server queues and refuses it).
    expect(forceIncludeBody(w, '0x00ff', 10).payload).toBe('0x00ff');
    expect(() => forceIncludeBody(w, 'xyz', 10)).toThrow(TypeError);
    expect(() => forceIncludeBody(w, '0x' + '00'.repeat(FORCED_PAYLOAD_BYTES_MAX + 1), 10)).toThrow(RangeError);
  });

  it('forcedEnvelope: envelope nonce n, payload nonce n + 1, payload = the direct call body + kind', () => {
    const r: ForcedRequest = { kind: 'order', market_id: 'ETH-USDC', side: 'bid', price: 2000010000, quantity: 300, client_order_id: 'f-1' };
    const { envelope, body, payload_nonce } = forcedEnvelope(w, r, 100);
    expect(envelope.nonce).toBe(100);
    expect(payload_nonce).toBe(101);
    const { kind: _k, ...direct } = r;
    expect(body).toEqual(orderBody(w, direct, 101));
    expect(decodeForcedPayload(envelope.payload as string)).toEqual({ kind: 'order', ...body });
    expect(decodeForcedPayload(forcedEnvelope(w, r, 100, { kind_member: false }).envelope.payload as string)).toEqual(body);
    expect(forcedEnvelope(w, r, 100, { payload_nonce: 500 }).body.nonce).toBe(500);
    // Both orders: the payload may be signed below the envelope's nonce (a request signed earlier).
    expect(forcedEnvelope(w, r, 100, { payload_nonce: 99 }).body.nonce).toBe(99);
    expect(() => forcedEnvelope(w, r, 100, { payload_nonce: 0 })).toThrow(RangeError);
  });
});

// ---------------------------------------------------------------------------------------------

describe('RingbookClient: referral and force-include requests (fake fetch)', () => {
  it('registerReferral signs with the next nonce; referral(address) reads', async () => {
    const { fetch, sent } = fakeFetch([ok({ referred: w.address, referrer: REFERRER, active_until: '2027-02-20T10:00:00.000Z', batch_id: '9' })]);
    const c = new RingbookClient({ base_url: 'http://x', wallet: w, fetch, nonces: new MonotonicNonce({ scale: 0 }) });
    const r = await c.registerReferral({ referrer: REFERRER });
    expect(r.batch_id).toBe('9');
    expect(sent[0]).toMatchObject({ method: 'POST', url: 'http://x/referral/register' });
    expect(sent[0].body).toEqual(referralBody(w, REFERRER, 1));
    await c.referral();
    await c.referral(REFERRER);
    expect(sent.slice(1).map((s) => s.url)).toEqual([`http://x/referral/${w.address}`, `http://x/referral/${REFERRER}`]);
    await expect(c.registerReferral({ referrer: 'nope' })).rejects.toThrow(TypeError);
    expect(sent).toHaveLength(3);
  });

  it('referral errors are typed', async () => {
    for (const [code, Cls] of [['INVALID_REFERRAL', InvalidReferralError], ['REFERRAL_EXISTS', ReferralExistsError], ['NOT_FOUND', NotFoundError]] as const) {
      const { fetch } = fakeFetch([err(code === 'NOT_FOUND' ? 404 : 400, code)]);
      const c = new RingbookClient({ base_url: 'http://x', wallet: w, fetch });
      await expect(c.registerReferral({ referrer: REFERRER, nonce: 5 })).rejects.toBeInstanceOf(Cls);
    }
  });

  it('forceInclude: the envelope from the envelope nonces, the payload from the trading nonces; DUPLICATE_NONCE re-signs the envelope', async () => {
    const { fetch, sent } = fakeFetch([err(400, 'DUPLICATE_NONCE'), (s) => ({ status: 200, body: { ok: true, data: { entry_id: 1, nonce: s.body.nonce } } })]);
    const nonces = new MonotonicNonce({ scale: 0, start: 40 });
    const envelope_nonces = new MonotonicNonce({ scale: 0 });
    const c = new RingbookClient({ base_url: 'http://x', wallet: w, fetch, nonces, envelope_nonces });
    await c.forceInclude({ kind: 'cancel', order_id: 17 });
    expect(sent.map((s) => s.url)).toEqual(['http://x/force-include', 'http://x/force-include']);
    expect(sent.map((s) => s.body.nonce)).toEqual([1, 2]);
    for (const s of sent) {
      const inner = decodeForcedPayload(s.body.payload);
      expect(inner).toEqual({ kind: 'cancel', ...cancelBody(w, { order_id: 17 }, 41) });
      expect(signer(forceIncludeMessage({ user: w.address, payload: s.body.payload, nonce: s.body.nonce }), s.body.signature)).toBe(w.address);
    }
    expect(nonces.next()).toBe(42);
    expect(envelope_nonces.next()).toBe(3);
  });

  it('forceInclude with an explicit nonce, forceIncludePayload, forceInclusion, forcedResultError', async () => {
    const { fetch, sent } = fakeFetch([ok({ entry_id: 7 })]);
    const c = new RingbookClient({ base_url: 'http://x', wallet: w, fetch, nonces: new MonotonicNonce({ scale: 0 }) });
    await c.forceInclude({ kind: 'withdrawal', asset: 'USDC', amount: '5000000' }, { nonce: 40, payload_nonce: 41 });
    expect(sent[0].body.nonce).toBe(40);
    expect(decodeForcedPayload(sent[0].body.payload)).toMatchObject({ kind: 'withdrawal', address: w.address, amount: '5000000', nonce: 41 });
    // A request signed earlier at 61, wrapped as is at envelope 62 (or any envelope nonce).
    const pre = amendBody(w, { order_id: 3, price: 2000000000, quantity: 100 }, 61);
    await c.forceIncludePayload(pre, { nonce: 62 });
    expect(decodeForcedPayload(sent[1].body.payload)).toEqual(pre); // no kind member added
    expect(sent[1].body.nonce).toBe(62);
    await c.forceInclusion(7);
    expect(sent[2]).toMatchObject({ method: 'GET', url: 'http://x/force-include/7' });

    expect(forcedResultError(null)).toBeNull();
    expect(forcedResultError({ accepted: true, error: null, message: null })).toBeNull();
    const e = forcedResultError({ accepted: false, error: 'INVALID_SIGNATURE', message: 'the forced payload signature is invalid' });
    expect(e).toBeInstanceOf(InvalidSignatureError);
    expect(e?.status).toBe(0);
    expect(forcedResultError({ accepted: false, error: 'DUPLICATE_NONCE', message: null })).toBeInstanceOf(DuplicateNonceError);
  });

  it('waitForInclusion polls until the entry is included', async () => {
    const pending = { entry_id: 7, status: 'pending', deadline: 'x' };
    const { fetch, sent } = fakeFetch([ok(pending), ok(pending), ok({ ...pending, status: 'included', result: { accepted: true } })]);
    const c = new RingbookClient({ base_url: 'http://x', fetch });
    const st = await c.waitForInclusion(7, { interval_ms: 1 });
    expect(st.status).toBe('included');
    expect(sent).toHaveLength(3);
    const { fetch: f2 } = fakeFetch([ok(pending)]);
    await expect(new RingbookClient({ base_url: 'http://x', fetch: f2 }).waitForInclusion(7, { interval_ms: 5, timeout_ms: 12 })).rejects.toThrow(/still pending/);
  });
});
