// consentOf (src/da/consent_check.ts) rule by rule, on records built with the real codec: what
// each origin may do, messages that must say their request, and the journal/snapshot version
// refusals that keep an older format from being misread.
import { describe, expect, it } from 'vitest';
import { eip191Hash } from '../../src/auth/eip191.js';
import { recoverAddress } from '../../src/auth/recover.js';
import { signPersonalMessage, addressFromPrivateKey } from '../../src/auth/sign.js';
import { consentOf, type ConsentLookup } from '../../src/da/consent_check.js';
import { ConsentPool } from '../../src/da/consent_pool.js';
import { emptyRequest, NO_MARKET, RequestKind, Side, type Request } from '../../src/engine/types.js';
import { Reject } from '../../src/engine/codes.js';
import { decodeBatch, encodeBatch, JOURNAL_VERSION } from '../../src/journal/journal_codec.js';
import { encodeConsent, OperatorRule, signatureBytes, type Consent, type SignedMessage } from '../../src/ring/consent.js';
import { createRecordRing, RECORD_WORDS } from '../../src/ring/records.js';
import { RequestWriter } from '../../src/ring/request_records.js';

const KEY = '0x' + '11'.repeat(32);
const OTHER = '0x' + '22'.repeat(32);
const USER = addressFromPrivateKey(KEY);
const look: ConsentLookup = {
  marketId: (m) => (m === 0 ? 'ETH-USDC' : null),
  assets: [{ symbol: 'ETH', onchain_decimals: 18 }, { symbol: 'BTC', onchain_decimals: 8 }, { symbol: 'USDC', onchain_decimals: 6 }],
};

function sm(message: string, key = KEY): SignedMessage {
  return { signature: signatureBytes(signPersonalMessage(key, message)), message };
}

function signed(message: string, key = KEY): Consent {
  return { origin: 'user', request: sm(message, key), payload: null };
}

function bytesOf(items: { r: Request; consent: Consent | null; signer?: string; second?: string }[]): Uint8Array {
  const ring = createRecordRing(64);
  const w = new RequestWriter(ring);
  const bytes20 = (a: string | undefined): Uint8Array | null => (a === undefined ? null : Buffer.from(a.slice(2), 'hex'));
  items.forEach(({ r, consent, signer, second }, i) => {
    expect(w.tryWrite(i + 1, Buffer.from(USER.slice(2), 'hex'), 0, r, bytes20(second), consent === null ? null : encodeConsent(consent), 0, bytes20(signer))).toBe(true);
  });
  w.flush();
  const n = ring.available();
  const out = new Int32Array(n * RECORD_WORDS);
  for (let i = 0; i < n; i++) out.set(ring.i32.subarray(ring.slotOffset(i), ring.slotOffset(i) + RECORD_WORDS), i * RECORD_WORDS);
  return new Uint8Array(out.buffer);
}

function req(kind: number, f: Partial<Request>): Request {
  return Object.assign(emptyRequest(), { kind }, f);
}

const place = req(RequestKind.PLACE, { nonce: 5, market: 0, side: Side.BID, price_units: 2_000_000_000, quantity_units: 100 });
const placeJson = '{"market_id":"ETH-USDC","side":"bid","price":2000000000,"quantity":100,"order_type":"limit","time_in_force":"gtc","nonce":5}';

describe('consentOf', () => {
  it('agent keys: approvals say the agent, name and expiry; an agent\'s signature recovers to the signer the record names; an agent may not sign a withdrawal', () => {
    const AGENT = addressFromPrivateKey(OTHER);
    const approve = req(RequestKind.APPROVE_AGENT, { nonce: 7, amount_units: 1_800_000_000_000, client_order_id: 'quoter-1' });
    const agentPlace = req(RequestKind.PLACE, { ...place, nonce: 1 });
    const agentJson = placeJson.replace('"nonce":5', '"nonce":1');
    const c = consentOf(bytesOf([
      { r: approve, second: AGENT, consent: signed(`ringbook:approve-agent:${AGENT.toUpperCase().replace('0X', '0x')}:quoter-1:1800000000000:7`) },
      { r: agentPlace, signer: AGENT, consent: signed(agentJson, OTHER) },
      { r: req(RequestKind.REVOKE_AGENT, { nonce: 8 }), second: AGENT, consent: signed(`ringbook:revoke-agent:${AGENT}:8`) },
      // The name is exact (only the address may change case).
      { r: approve, second: AGENT, consent: signed(`ringbook:approve-agent:${AGENT}:Quoter-1:1800000000000:7`) },
      { r: req(RequestKind.WITHDRAW, { nonce: 2, asset: 0, amount_units: 3 }), signer: AGENT, consent: signed(`ringbook:withdraw:${USER}:ETH:3000000000000:2`, OTHER) },
      // The operator claims the agent signed what the user signed: the job expects the agent.
      { r: agentPlace, signer: AGENT, consent: signed(agentJson) },
    ]), look);
    expect(c.requests.map((r) => [r.kind, r.signer])).toEqual([
      ['approve_agent', null], ['order', AGENT], ['revoke_agent', null], ['approve_agent', null], ['withdrawal', AGENT], ['order', AGENT],
    ]);
    expect(c.problems).toEqual([
      expect.stringMatching(/request 3 .*does not say this request/),
      expect.stringMatching(/request 4 .*signed by its agent .*an agent may not sign withdrawal/),
    ]);
    expect(c.jobs.map((j) => j.expected)).toEqual([USER, AGENT, USER, USER, AGENT, AGENT]);
    const recovered = c.jobs.map((j) => recoverAddress(j.hash, j.signature));
    expect(recovered.map((x, i) => x === c.jobs[i].expected)).toEqual([true, true, true, true, true, false]);
  });

  it('a user request signed over its own message is clean; both order forms; the job recovers to the user', () => {
    const c = consentOf(bytesOf([
      { r: place, consent: signed(placeJson) },
      { r: place, consent: signed('ringbook:order:ETH-USDC:bid:2000000000:100:5') },
      { r: req(RequestKind.WITHDRAW, { nonce: 6, asset: 0, amount_units: 3 }), consent: signed(`ringbook:withdraw:${USER.toUpperCase().replace('0X', '0x')}:ETH:3000000000000:6`) },
      { r: req(RequestKind.DEPOSIT, { asset: 2, amount_units: 9 }), consent: null },
    ]), look);
    expect(c.problems).toEqual([]);
    expect(c.requests.map((r) => [r.kind, r.origin, r.message_form])).toEqual([
      ['order', 'user', 'json'], ['order', 'user', 'colon'], ['withdrawal', 'user', 'colon'], ['deposit', 'admin', null],
    ]);
    expect(c.jobs).toHaveLength(3);
    for (const j of c.jobs) expect(recoverAddress(j.hash, j.signature)).toBe(USER);
    expect(c.jobs[0].hash).toEqual(eip191Hash(placeJson));
  });

  it('only an address may change case in a signed text: not the service token, the kind, an asset or a 0x prefix', () => {
    const withdraw = req(RequestKind.WITHDRAW, { nonce: 6, asset: 0, amount_units: 3 });
    const text = `ringbook:withdraw:${USER}:ETH:3000000000000:6`;
    const mixed = USER.slice(0, 2) + USER.slice(2).toUpperCase();
    const AGENT = addressFromPrivateKey(OTHER);
    const c = consentOf(bytesOf([
      { r: withdraw, consent: signed(text.replace(USER, mixed)) },
      { r: withdraw, consent: signed(text.replace('ETH', 'eth')) },
      { r: withdraw, consent: signed(text.toUpperCase().replace('0X', '0x')) },
      { r: withdraw, consent: signed(text.replace(USER, '0X' + USER.slice(2))) },
      { r: req(RequestKind.REFER, { nonce: 3 }), second: AGENT, consent: signed(`Ringbook:referral:${USER}:${AGENT}:3`) },
      { r: req(RequestKind.REFER, { nonce: 3 }), second: AGENT, consent: signed(`ringbook:referral:${mixed}:${AGENT.toUpperCase().replace('0X', '0x')}:3`) },
    ]), look);
    expect(c.problems).toEqual([
      expect.stringMatching(/request 1 .*does not say this request/),
      expect.stringMatching(/request 2 .*does not say this request/),
      expect.stringMatching(/request 3 .*does not say this request/),
      expect.stringMatching(/request 4 .*does not say this request/),
    ]);
  });

  it('a record value with no integer text is a problem of the batch, not a throw; a force-include nonce is compared as text', () => {
    const hash = '0x' + 'ab'.repeat(32);
    const c = consentOf(bytesOf([
      { r: req(RequestKind.CANCEL, { nonce: 1.5, order_id: 3 }), consent: signed('ringbook:cancel:3::1.5') },
      { r: req(RequestKind.WITHDRAW, { nonce: 2, asset: 0, amount_units: 0.5 }), consent: signed(`ringbook:withdraw:${USER}:ETH:500000000000:2`) },
      { r: req(RequestKind.PLACE, { ...place, price_units: 2 ** 53 }), consent: signed(placeJson.replace('2000000000', String(2 ** 53))) },
      // 2^53 + 1 in the text rounds to the record's 2^53: not the same nonce.
      { r: req(RequestKind.FORCE_INCLUDE, { nonce: 2 ** 53, inner_kind: RequestKind.CANCEL, inner_reject: Reject.FORCED_SIGNATURE_INVALID }), consent: signed(`ringbook:force-include:${USER}:${hash}:9007199254740993`) },
    ]), look);
    expect(c.problems).toEqual([
      expect.stringMatching(/request 0 .*does not say this request/),
      expect.stringMatching(/request 1 .*does not say this request/),
      expect.stringMatching(/request 2 .*does not say this request/),
      expect.stringMatching(/request 3 .*is not this envelope/),
    ]);
  });

  it('an order\'s stp and expires_after_ms must be in its JSON message; the colon form cannot carry them', () => {
    const guarded = req(RequestKind.PLACE, { ...place, stp: 1, expires_after_ms: 1_764_000_000_000 });
    const json = placeJson.replace('"nonce":5}', '"nonce":5,"stp":"expire_taker","expires_after_ms":1764000000000}');
    const default_named = placeJson.replace('"nonce":5}', '"nonce":5,"stp":"expire_maker"}');
    const c = consentOf(bytesOf([
      { r: guarded, consent: signed(json) },
      { r: place, consent: signed(default_named) }, // expire_maker named: the same request as omitted
      { r: guarded, consent: signed(placeJson) }, // the signed order had no guard: the operator added one
      { r: guarded, consent: signed('ringbook:order:ETH-USDC:bid:2000000000:100:5') },
      { r: req(RequestKind.PLACE, { ...place, stp: 2 }), consent: signed(json) }, // another mode than signed
    ]), look);
    expect(c.problems).toEqual([
      expect.stringMatching(/request 2 .*does not say this request/),
      expect.stringMatching(/request 3 .*does not say this request/),
      expect.stringMatching(/request 4 .*does not say this request/),
    ]);
  });

  it('names a message that says another request, a missing consent, and an admin request with one', () => {
    const c = consentOf(bytesOf([
      { r: place, consent: signed(placeJson.replace('"price":2000000000', '"price":1000000000')) },
      { r: req(RequestKind.CANCEL, { nonce: 7, order_id: 3 }), consent: null },
      { r: req(RequestKind.SET_FEES, { market: NO_MARKET }), consent: signed('x') },
    ]), look);
    expect(c.problems).toEqual([
      expect.stringMatching(/request 0 .*does not say this request/),
      expect.stringMatching(/request 1 .*a user request without consent/),
      expect.stringMatching(/request 2 .*an admin request carries a consent slot/),
    ]);
  });

  it('an operator request may cancel, never place, withdraw or move funds', () => {
    const op = (rule: number): Consent => ({ origin: 'operator', rule });
    const c = consentOf(bytesOf([
      { r: req(RequestKind.CANCEL, { nonce: 0, order_id: 3 }), consent: op(OperatorRule.CREDIT_AUTO_CANCEL) },
      { r: req(RequestKind.CANCEL_ALL, { nonce: 0, market: NO_MARKET }), consent: op(OperatorRule.CANCEL_ON_DISCONNECT) },
      { r: place, consent: op(OperatorRule.DEAD_MAN_SWITCH) },
      { r: req(RequestKind.WITHDRAW, { nonce: 9, asset: 2, amount_units: 1 }), consent: op(OperatorRule.EXPIRY) },
      { r: req(RequestKind.CANCEL, { nonce: 0, order_id: 3 }), consent: op(99) },
    ]), look);
    expect(c.requests.map((r) => [r.origin, r.operator_rule])).toEqual([
      ['operator', 'credit_auto_cancel'], ['operator', 'cancel_on_disconnect'], ['operator', 'dead_man_switch'], ['operator', 'expiry'], ['operator', 'rule 99'],
    ]);
    expect(c.problems).toEqual([
      expect.stringMatching(/request 2 .*may only cancel, not order/),
      expect.stringMatching(/request 3 .*may only cancel, not withdrawal/),
      expect.stringMatching(/request 4 .*unknown rule 99/),
    ]);
    expect(c.jobs).toEqual([]);
  });

  it('cancel-after is user-signed over its own text; a disconnect cancel needs the operator and its rule', () => {
    const c = consentOf(bytesOf([
      { r: req(RequestKind.CANCEL_AFTER, { nonce: 4, amount_units: 5_000 }), consent: signed('ringbook:cancel-after:5000:4') },
      { r: req(RequestKind.CANCEL_AFTER, { nonce: 5, amount_units: 5_000 }), consent: signed('ringbook:cancel-after:60000:5') },
      { r: req(RequestKind.DISCONNECT_CANCEL, {}), consent: { origin: 'operator', rule: OperatorRule.CANCEL_ON_DISCONNECT } },
      { r: req(RequestKind.DISCONNECT_CANCEL, {}), consent: signed('ringbook:cancel-all:*:0') },
      { r: req(RequestKind.DISCONNECT_CANCEL, {}), consent: null },
    ]), look);
    expect(c.requests.map((r) => [r.kind, r.origin])).toEqual([
      ['cancel_after', 'user'], ['cancel_after', 'user'], ['disconnect_cancel', 'operator'], ['disconnect_cancel', 'admin'], ['disconnect_cancel', 'admin'],
    ]);
    expect(c.problems).toEqual([
      expect.stringMatching(/request 1 .*does not say this request/),
      expect.stringMatching(/request 3 .*issued by the operator only/),
      expect.stringMatching(/request 4 .*without consent/),
    ]);
    // Both signed texts are recovered (a wrong text is a problem on its own); the operator's need none.
    expect(c.jobs).toHaveLength(2);
  });

  it('a force-include checks the envelope text and the payload it will apply', async () => {
    const hash = '0x' + 'ab'.repeat(32);
    const env = `ringbook:force-include:${USER}:${hash}:4`;
    const fi = req(RequestKind.FORCE_INCLUDE, { nonce: 4, inner_kind: RequestKind.CANCEL, inner_nonce: 2, order_id: 9, inner_reject: Reject.NONE });
    const payload = 'ringbook:cancel:9::2';
    const good: Consent = { origin: 'user', request: sm(env), payload: sm(payload) };
    const stranger: Consent = { origin: 'user', request: sm(env), payload: sm(payload, OTHER) };
    const c = consentOf(bytesOf([{ r: fi, consent: good }, { r: fi, consent: stranger }, { r: fi, consent: signed(env) }]), look);
    expect(c.requests[0]).toMatchObject({ kind: 'force_include', payload_message: payload });
    expect(c.problems).toEqual([expect.stringMatching(/request 2 .*a payload to be applied without its signature/)]);
    const pool = new ConsentPool(2);
    try {
      const bad = await pool.failures(c.jobs);
      expect(bad.map((f) => [f.job.label.replace(/ \(.*\)/, ''), f.recovered])).toEqual([['request 1, payload', addressFromPrivateKey(OTHER)]]);
    } finally {
      await pool.close();
    }
  });

  it('a forced payload says the request the engine applies: a plain order (an inbox entry keeps no stp or expiry) of a forcible kind', () => {
    const hash = '0x' + 'ab'.repeat(32);
    const env = `ringbook:force-include:${USER}:${hash}:4`;
    const forced = (inner: Partial<Request>, payload: string): { r: Request; consent: Consent } => ({
      r: req(RequestKind.FORCE_INCLUDE, { ...place, kind: RequestKind.FORCE_INCLUDE, nonce: 4, inner_kind: RequestKind.PLACE, inner_nonce: 5, inner_reject: Reject.NONE, ...inner }),
      consent: { origin: 'user', request: sm(env), payload: sm(payload) },
    });
    const taker = placeJson.replace('"nonce":5}', '"nonce":5,"stp":"expire_taker"}');
    const c = consentOf(bytesOf([
      forced({}, placeJson),
      forced({}, 'ringbook:order:ETH-USDC:bid:2000000000:100:5'),
      forced({ stp: 1 }, taker), // the engine would apply expire_maker
      forced({}, placeJson.replace('"nonce":5}', '"nonce":5,"stp":"expire_maker"}')),
      forced({ expires_after_ms: 1_764_000_000_000 }, placeJson.replace('"nonce":5}', '"nonce":5,"expires_after_ms":1764000000000}')),
      forced({ inner_kind: RequestKind.CANCEL_AFTER, amount_units: 5_000 }, 'ringbook:cancel-after:5000:5'),
    ]), look);
    expect(c.problems).toEqual([2, 3, 4, 5].map((k) => expect.stringMatching(new RegExp(`request ${k} .*does not say the payload request`))));
  });
});

describe('format versions', () => {
  it('a journal batch of version 2 is refused with a message naming the version', () => {
    const records = new Int32Array(RECORD_WORDS);
    const buf = encodeBatch(1, 0, records, 1);
    expect(decodeBatch(buf, 1).count).toBe(1);
    buf.writeUInt32LE(2, 4);
    expect(() => decodeBatch(buf, 1)).toThrow(/journal format version 2, this server reads version 3 only/);
    expect(JOURNAL_VERSION).toBe(3);
  });
});
