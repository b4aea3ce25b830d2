// Property: the gateway and the verifier agree on every signed text the gateway accepts. A body of
// each signed kind (generated with edge values) goes through the gateway's real code: the JSON body
// parser (json_object.ts), the kind's parser (signed_requests.ts, signed_account_requests.ts, the
// batch item and force-include paths), the consent encoders and the request record writer. Each
// message form the gateway would journal is then read back by the verifier's consent check
// (da/consent_check.ts), which must find no problem and recover over exactly that text; and a
// one-character change of the text must be refused (except an address's hex digits changing case:
// the gateway accepts an address in any case, so either spelling may be signed).
//
// No server and no real signatures: consentOf compares texts and lists the recoveries to run (the
// job's hash must be the EIP-191 hash of the journaled text; recovery itself is tested elsewhere).
// Fixed seed, bounded runs; fast-check prints the seed and path of a failure, and
// RINGBOOK_PROPERTY_SEED replays another seed.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eip191Hash } from '../../src/auth/eip191.js';
import { agentMaySign } from '../../src/engine/agents.js';
import { consentOf, type ConsentLookup } from '../../src/da/consent_check.js';
import type { GatewayContext } from '../../src/gateway/context.js';
import { parseJsonObject } from '../../src/gateway/json_object.js';
import { ORDER_ENTRY_KINDS, parseBatchItem } from '../../src/gateway/order_entry.js';
import { parseForceEnvelope, parseForcedPayload, type ForceEnvelope } from '../../src/gateway/forced_payload.js';
import { prepareForceInclude } from '../../src/gateway/routes_programmes.js';
import { parseApproveAgent, parseReferral, parseRevokeAgent, parseWithdrawal } from '../../src/gateway/signed_account_requests.js';
import { isBodyError, type AssetInfo, type Body, type BodyError, type SignedRequest } from '../../src/gateway/signed_body.js';
import { encodeConsent, signatureBytes, UserConsentEncoder, type Consent } from '../../src/ring/consent.js';
import { createRecordRing, RECORD_WORDS } from '../../src/ring/records.js';
import { RequestWriter } from '../../src/ring/request_records.js';
import type { Request } from '../../src/engine/types.js';

const SEED = Number(process.env.RINGBOOK_PROPERTY_SEED ?? 20261129);
const RUNS = 100;

// The shipped config: the gateway's lookups as server.ts and the read model build them, the
// verifier's as src/da/verifier.ts and src/cli/verify.ts build them.
interface ConfigFile { assets: { symbol: string; onchain_decimals: number }[]; markets: { id: string; base: string; quote: string }[] }
const cfg = JSON.parse(readFileSync(new URL('../../config/default.json', import.meta.url), 'utf8')) as ConfigFile;
const assets = new Map<string, AssetInfo>(cfg.assets.map((a, index) => [a.symbol, { index, onchain_decimals: a.onchain_decimals }]));
const markets = { marketIndex: (id: string): number => cfg.markets.findIndex((m) => m.id === id) };
const look: ConsentLookup = {
  marketId: (m) => (m >= 0 && m < cfg.markets.length ? `${cfg.markets[m].base}-${cfg.markets[m].quote}` : null),
  assets: cfg.assets.map((a) => ({ symbol: a.symbol, onchain_decimals: a.onchain_decimals })),
};
/** What the parsers read of the context: the markets, the assets; force-include's signature check is never awaited. */
const ctx = {
  rm: markets, assets, signatures: { verifyAny: () => Promise.resolve(null) },
} as unknown as GatewayContext;

const SIG = '0x' + '1b'.repeat(64) + '1c';
const AGENT = '0x' + 'a9'.repeat(20);
const MAX = Number.MAX_SAFE_INTEGER;

// ---- Generators: a member is absent (undefined) or a JSON literal's text. Each member has values
// the gateway accepts (edge values among them: 0, 2^53 - 1, -0, 1e3, any address case, 36-char
// ids) and values it refuses; a body takes accepted values, with at most one member (sometimes)
// given a refused-or-edge one, so most bodies are accepted and every member's edges are tried.
type Lit = string | undefined;
const j = (v: unknown): string => JSON.stringify(v);
const lit = (...xs: unknown[]): fc.Arbitrary<Lit> => fc.constantFrom(...xs.map(j));
const raw = (...xs: string[]): fc.Arbitrary<Lit> => fc.constantFrom(...xs);
const absent = fc.constant<Lit>(undefined);
/** A member: what the gateway accepts, and what it refuses or reads at the edge. */
interface Field { ok: fc.Arbitrary<Lit>; odd: fc.Arbitrary<Lit> }
const field = (ok: fc.Arbitrary<Lit>, odd: fc.Arbitrary<Lit>): Field => ({ ok, odd });

const nat: fc.Arbitrary<Lit> = fc.oneof(
  { weight: 4, arbitrary: fc.oneof(fc.nat(1_000), fc.integer({ min: 0, max: MAX })).map(j) },
  { weight: 1, arbitrary: fc.oneof(lit(0, 1, MAX), raw('-0', '1e3', '1E2', '1.0', '10.0e-1', '0.0000001e7')) },
);
const int = field(nat, fc.oneof(lit(-1, -MAX, '5', '007', '', null, true, 2 ** 53), raw('1.5', '9007199254740992', '1e400', '-1e0'), absent));
const hex40 = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => Buffer.from(b).toString('hex'));
const address = field(
  fc.tuple(hex40, fc.constantFrom('lower', 'upper', 'mixed')).chain(([h, c]) => (c === 'mixed'
    ? fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }).map((up) => '0x' + [...h].map((d, i) => (up[i] ? d.toUpperCase() : d)).join(''))
    : fc.constant('0x' + (c === 'upper' ? h.toUpperCase() : h)))).map(j),
  fc.oneof(hex40.chain((h) => lit('0X' + h, '0x' + h.slice(1), h, '0x' + h + '0', ` 0x${h}`, '0x' + h.slice(2) + 'zz')), absent),
);
const clientId = field(
  fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,36}$/).map(j), lit('x'.repeat(36), '0', '00', '-', '_')),
  fc.oneof(lit('', 'x'.repeat(37), 'a:b', 'é', '\u{1F600}', 'a\u0000', null, 7), fc.string({ unit: 'grapheme', maxLength: 8 }).map(j)),
);
const optional = (f: Field): Field => field(fc.oneof(absent, f.ok), f.odd);
const orderId = field(
  fc.oneof(fc.integer({ min: 1, max: MAX }).chain((n) => lit(n, String(n))), lit(1, '1', MAX, String(MAX)), raw('1e0', '2.0', '1E1')),
  fc.oneof(absent, lit('0', 0, '007', '', null, '9007199254740992', '1'.repeat(30), -1, ' 5', '+5', '5.0', 1.5), raw('-0')),
);
const market = field(fc.constantFrom(...cfg.markets.map((m) => j(m.id))), lit('eth-usdc', 'ETH-BTC', '', '*', 'ÉTH-USDC', null, 0));
const sig = field(lit(SIG, SIG.slice(0, 2) + SIG.slice(2).toUpperCase()), lit('0x12', SIG.toUpperCase(), null, SIG + '00'));
const name = (ok: unknown[], odd: unknown[]): Field => field(lit(...ok), lit(...odd));

const BODIES = {
  order: {
    user: address, market_id: market, side: name(['bid', 'ask'], ['BID', '', 0]),
    order_type: name(['limit', 'market'], ['LIMIT', 'stop']), time_in_force: name(['gtc', 'ioc', 'fok', 'post_only'], ['GTC', 'day']),
    price: field(fc.oneof(nat, absent), fc.oneof(int.odd, lit(-1))), quantity: int, nonce: int, signature: sig,
    client_order_id: optional(clientId),
    stp: field(fc.oneof(absent, lit('expire_maker', 'expire_taker', 'expire_both')), lit('EXPIRE_MAKER', 0, null, '')),
    expires_after_ms: field(fc.oneof(absent, fc.integer({ min: 1, max: MAX }).map(j)), lit(0, -1, '1', 2 ** 53, null)),
  },
  cancel: { user: address, order_id: field(fc.oneof(orderId.ok, absent), orderId.odd), client_order_id: optional(clientId), nonce: int, signature: sig },
  amend: { user: address, order_id: orderId, price: field(nat, int.odd), quantity: int, nonce: int, signature: sig },
  cancel_all: { user: address, market_id: field(fc.oneof(absent, lit('*', null), market.ok), market.odd), nonce: int, signature: sig },
  cancel_after: { user: address, timeout_ms: field(fc.oneof(nat, lit(-1, 1_000, 86_400_000)), int.odd), nonce: int, signature: sig },
  withdrawal: {
    address, asset: field(fc.constantFrom(...cfg.assets.map((a) => j(a.symbol))), lit('eth', 'Usdc', 'XYZ', '', null)),
    amount: field(
      // Engine units (FIX scales them): a JSON integer or a decimal string.
      fc.tuple(fc.oneof(fc.bigInt(0n, BigInt(MAX)), fc.constantFrom(0n, 1n, BigInt(MAX))), fc.boolean()).map(([u, as_number]) => (as_number ? u.toString() : j(u.toString()))),
      fc.oneof(lit('007', '', '-1', '1.5', '1e12', -1, null, '1'.repeat(31), '1000000000001'), raw('1e12', '-0', '1.0')),
    ),
    nonce: int, signature: sig,
  },
  referral: { referred: address, referrer: address, nonce: int, signature: sig },
  approve_agent: {
    user: address, agent: address,
    name: field(fc.oneof(fc.stringMatching(/^[A-Za-z0-9_.-]{1,16}$/).map(j), lit('x'.repeat(16), '.', '-')), lit('x'.repeat(17), 'a:b', 'é', '', null)),
    valid_until_ms: field(fc.oneof(nat, lit(-1)), int.odd), nonce: int, signature: sig,
  },
  revoke_agent: { user: address, agent: address, nonce: int, signature: sig },
} as const;
type Members = [string, Lit][];
/** A body of `shape`: accepted values, with at most one member (named by `odd`) given an odd one. */
function members(shape: Record<string, Field>, fix: (v: Record<string, Lit>) => Record<string, Lit>): fc.Arbitrary<Members> {
  const keys = Object.keys(shape);
  const ok = fc.record(Object.fromEntries(keys.map((k) => [k, shape[k].ok])) as Record<string, fc.Arbitrary<Lit>>).map(fix);
  return fc.tuple(ok, fc.option(fc.constantFrom(...keys), { nil: null, freq: 2 })).chain(([v, odd]) => (odd === null
    ? fc.constant(Object.entries(v))
    : shape[odd].odd.map((x) => Object.entries({ ...v, [odd]: x }))));
}
const objectText = (m: Members): string => `{${m.filter(([, v]) => v !== undefined).map(([k, v]) => `${j(k)}:${v as string}`).join(',')}}`;
/**
 * Accepted values that depend on one another: an order's price is there exactly when it is a limit
 * order; a withdrawal's amount (generated in engine units) is in the asset's on-chain unit.
 */
const FIX: Partial<Record<BodyKind, (v: Record<string, Lit>) => Record<string, Lit>>> = {
  order: (v) => ({ ...v, price: v.order_type === j('market') ? undefined : v.price ?? j(1_000_000) }),
  withdrawal: (v) => {
    const a = cfg.assets.find((x) => j(x.symbol) === v.asset);
    const sent = JSON.parse(v.amount as string) as number | string;
    const wei = BigInt(sent) * 10n ** BigInt((a?.onchain_decimals ?? 6) - 6);
    return { ...v, amount: typeof sent === 'number' && wei <= BigInt(MAX) ? wei.toString() : j(wei.toString()) };
  },
};
const bodyOf = (kind: BodyKind): fc.Arbitrary<Members> => members(BODIES[kind] as unknown as Record<string, Field>, FIX[kind] ?? ((v) => v));

type BodyKind = keyof typeof BODIES;

const PARSE: Record<BodyKind, (b: Body) => SignedRequest | BodyError> = {
  order: (b) => ORDER_ENTRY_KINDS['/orders'].parse(ctx, b),
  cancel: (b) => ORDER_ENTRY_KINDS['/orders/cancel'].parse(ctx, b),
  amend: (b) => ORDER_ENTRY_KINDS['/orders/amend'].parse(ctx, b),
  cancel_all: (b) => ORDER_ENTRY_KINDS['/orders/cancel-all'].parse(ctx, b),
  cancel_after: (b) => ORDER_ENTRY_KINDS['/orders/cancel-after'].parse(ctx, b),
  withdrawal: (b) => parseWithdrawal(b, assets),
  referral: parseReferral,
  approve_agent: parseApproveAgent,
  revoke_agent: parseRevokeAgent,
};

/** A one-character change: replace, insert or delete at `at` (wrapped to the text). */
const mutation = fc.record({ at: fc.nat(), op: fc.constantFrom('replace', 'insert', 'delete', 'case', 'case'), ch: fc.oneof(fc.constantFrom(':', '0', '9', 'a', 'A', 'x', '"', ',', ' ', '-', '*', 'é'), fc.string({ minLength: 1, maxLength: 1 })) });
type Mutation = { at: number; op: string; ch: string };

/**
 * The mutated text (`case`: the letter at `at` in the other case), or null when the change is not
 * one the verifier can see: an address's hex digit changing case (the gateway accepts either
 * spelling), or another hex digit of a force-include envelope's payload hash (the payload's bytes
 * are not journaled, so only the envelope signature binds the hash: docs/verifiability.md).
 */
function mutate(text: string, m: Mutation): string | null {
  const at = m.at % (text.length + (m.op === 'insert' ? 1 : 0));
  if (m.op === 'delete') return text.slice(0, at) + text.slice(at + 1);
  if (m.op === 'insert') return text.slice(0, at) + m.ch + text.slice(at);
  const c = text[at];
  const ch = m.op === 'case' ? (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) : m.ch;
  const out = text.slice(0, at) + ch + text.slice(at + 1);
  if (out === text) return null;
  for (const a of text.matchAll(/0x[0-9a-fA-F]{40}(?![0-9a-fA-F])/g)) {
    const i = a.index ?? 0;
    if (at >= i + 2 && at < i + 42 && ch.toLowerCase() === c.toLowerCase()) return null;
  }
  const hash = /^ringbook:force-include:0x[0-9a-fA-F]{40}:0x/.exec(text);
  if (hash !== null && at >= hash[0].length && at < hash[0].length + 64 && /^[0-9a-f]$/.test(ch)) return null;
  return out;
}

const hexBytes = (a: string): Buffer => Buffer.from(a.slice(2), 'hex');

interface Written { r: Request; user: string; referrer: string | null; consent: Consent | Uint8Array; signer: string | null; group_following: number }

/** The records as the front writes them (RequestWriter), and as published batch inputs. */
const ring = createRecordRing(64);
const w = new RequestWriter(ring);
function recordBytes(items: Written[]): Uint8Array {
  items.forEach((x, i) => {
    const blob = x.consent instanceof Uint8Array ? x.consent : encodeConsent(x.consent);
    const ok = w.tryWrite(i + 1, hexBytes(x.user), 0, x.r, x.referrer === null ? null : hexBytes(x.referrer), blob, x.group_following, x.signer === null ? null : hexBytes(x.signer));
    expect(ok).toBe(true);
  });
  w.flush();
  const n = ring.available();
  const out = new Int32Array(n * RECORD_WORDS);
  for (let i = 0; i < n; i++) out.set(ring.i32.subarray(ring.slotOffset(i), ring.slotOffset(i) + RECORD_WORDS), i * RECORD_WORDS);
  ring.release(n);
  return new Uint8Array(out.buffer);
}

const user_encoder = new UserConsentEncoder();
const userConsent = (message: string): Consent => ({ origin: 'user', request: { signature: signatureBytes(SIG), message }, payload: null });

/** The forms the gateway admits (signed_route.ts admitSigned: the JSON form only when json_form_only). */
function admittedForms(p: SignedRequest): string[] {
  const out: string[] = [];
  for (let k = 0; k < p.messages.length; k++) {
    const m = p.messages.at(k);
    if (m !== undefined && (k === 0 || p.json_form_only !== true)) out.push(m);
  }
  return out;
}

/** Every journaled text is clean and recovered over as is; each mutation of it is refused. */
function checkRoundTrip(items: Written[], texts: { message: string; payload: string | null }[], muts: Mutation[]): void {
  const c = consentOf(recordBytes(items), look);
  expect(c.problems).toEqual([]);
  expect(c.requests.map((v) => [v.message, v.payload_message])).toEqual(texts.map((t) => [t.message, t.payload]));
  const expected_jobs = items.flatMap((x, i) => [x.signer ?? x.user, ...(texts[i].payload === null ? [] : [x.user])]);
  expect(c.jobs.map((jb) => jb.expected)).toEqual(expected_jobs);
  const signed = texts.flatMap((t) => (t.payload === null ? [t.message] : [t.message, t.payload]));
  expect(c.jobs.map((jb) => Buffer.from(jb.hash).toString('hex'))).toEqual(signed.map((t) => Buffer.from(eip191Hash(t)).toString('hex')));
  // One mutation per written text, each in a batch of its own (the other records unchanged).
  items.forEach((x, i) => {
    const m = muts[i % muts.length];
    const t = texts[i];
    const target = t.payload !== null && m.at % 2 === 1 ? 'payload' : 'message';
    const changed = mutate(target === 'payload' ? (t.payload as string) : t.message, m);
    if (changed === null) return;
    const consent: Consent = target === 'payload'
      ? { ...(x.consent as Consent & { origin: 'user' }), payload: { signature: signatureBytes(SIG), message: changed } }
      : x.consent instanceof Uint8Array || x.consent.origin !== 'user' ? userConsent(changed) : { ...x.consent, request: { signature: signatureBytes(SIG), message: changed } };
    const bad = consentOf(recordBytes([{ ...x, consent, group_following: 0 }]), look);
    expect(bad.problems, `${JSON.stringify(changed)} (from ${JSON.stringify(target === 'payload' ? t.payload : t.message)}) was not refused`).toHaveLength(1);
  });
}

const accepted: Record<string, number> = {};
const count = (kind: string): void => {
  accepted[kind] = (accepted[kind] ?? 0) + 1;
};

/** A lone signed request (HTTP route or WebSocket post: the same parsers). */
function runLone(kind: BodyKind, text: string, agent: string | null, muts: Mutation[]): void {
  const body = parseJsonObject(Buffer.from(text, 'utf8'));
  if (!body.ok) return;
  const p = PARSE[kind](body.value);
  if (isBodyError(p)) return;
  count(kind);
  const signer = agent !== null && agentMaySign(p.request.kind) ? agent : null;
  for (const form of admittedForms(p)) {
    // The lone path's encoder (signed_route.ts): its view is written at once, as there.
    const blob = user_encoder.encode(SIG, form);
    const items = [{ r: p.request, user: p.address, referrer: p.referrer ?? null, consent: Uint8Array.from(blob), signer, group_following: 0 }];
    checkRoundTrip(items, [{ message: form, payload: null }], muts);
  }
}

const BATCH_KINDS = ['order', 'cancel', 'amend', 'cancel_all'] as const;
const FORCED = ['order', 'cancel', 'amend', 'cancel_all', 'withdrawal', 'referral'] as const;

describe('the verifier reconstructs every signed text the gateway accepts', () => {
  it('lone requests of every signed kind', () => {
    const kinds = Object.keys(BODIES) as BodyKind[];
    const lone = fc.constantFrom(...kinds).chain((kind) => fc.tuple(fc.constant(kind), bodyOf(kind), fc.option(hex40), fc.array(mutation, { minLength: 1, maxLength: 2 })));
    fc.assert(fc.property(lone, ([kind, m, agent, muts]) => runLone(kind, objectText(m), agent === null ? null : '0x' + agent, muts)), { seed: SEED, numRuns: RUNS * 4 });
    for (const k of kinds) expect(accepted[k] ?? 0, `no ${k} was accepted: the generator is too narrow`).toBeGreaterThan(0);
  });

  it('POST /orders/batch items (one group, journaled with their consent each)', () => {
    const item = fc.constantFrom(...BATCH_KINDS).chain((kind) => bodyOf(kind).map((m) => objectText([['kind', j(kind)], ...m])));
    const batch = fc.tuple(fc.array(item, { minLength: 1, maxLength: 4 }), fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 4 }));
    fc.assert(fc.property(batch, ([texts, pick, muts]) => {
      const body = parseJsonObject(Buffer.from(`{"requests":[${texts.join(',')}]}`, 'utf8'));
      if (!body.ok) return;
      const parsed = (body.value.requests as unknown[]).map((raw) => parseBatchItem(ctx, raw)).filter((x): x is { kind: (typeof ORDER_ENTRY_KINDS)['/orders']; parsed: SignedRequest } => !isBodyError(x));
      if (parsed.length === 0) return;
      count('batch');
      const forms = parsed.map((x, k) => {
        const all = admittedForms(x.parsed);
        return all[(pick + k) % all.length];
      });
      // Some items signed by an agent of the user (the signer words), as a live agent may sign them.
      const items = parsed.map((x, k) => ({
        r: x.parsed.request, user: x.parsed.address, referrer: null, consent: userConsent(forms[k]),
        signer: ((pick >> k) & 1) === 1 ? AGENT : null, group_following: parsed.length - 1 - k,
      }));
      checkRoundTrip(items, forms.map((message) => ({ message, payload: null })), muts);
    }), { seed: SEED, numRuns: RUNS });
    expect(accepted.batch ?? 0).toBeGreaterThan(0);
  });

  it('POST /force-include: the envelope, and the payload of each forced kind when it will be applied', () => {
    const payload = fc.constantFrom(...FORCED).chain((kind) => fc.tuple(bodyOf(kind), fc.boolean()).map(([m, named]) => objectText(named ? [['kind', j(kind)], ...m] : m)));
    const envelope = fc.tuple(fc.oneof({ weight: 9, arbitrary: address.ok }, { weight: 1, arbitrary: address.odd }), payload, fc.oneof({ weight: 9, arbitrary: int.ok }, { weight: 1, arbitrary: int.odd }), fc.boolean(), fc.boolean(), fc.array(mutation, { minLength: 1, maxLength: 2 }));
    fc.assert(fc.property(envelope, ([user, payload_text, n, same_user, payload_verified, muts]) => {
      // The payload's signer is most often the envelope's user (else the verdict is a signer mismatch).
      const text = same_user && user !== undefined ? payload_text.replace(/"(user|address|referred)":"0x[0-9a-fA-F]{40}"/, `"$1":${user}`) : payload_text;
      const env = objectText([['user', user], ['payload', j('0x' + Buffer.from(text, 'utf8').toString('hex'))], ['nonce', n], ['signature', j(SIG)]]);
      const body = parseJsonObject(Buffer.from(env, 'utf8'));
      if (!body.ok) return;
      const prepared = prepareForceInclude(ctx, body.value);
      if ('error' in prepared) return;
      prepared.checks.catch(() => undefined);
      // What prepareForceInclude's two signature checks see (the same parsers it runs).
      const parsed_envelope = parseForceEnvelope(body.value) as ForceEnvelope;
      const signed = parseForcedPayload(parsed_envelope, markets, assets).signed;
      const forms: (string | null)[] = payload_verified && signed !== null ? admittedForms(signed) : [null];
      for (const form of forms) {
        const c = prepared.finish([parsed_envelope.message, form]);
        if (!c.ok) throw new Error(c.message);
        count(c.consent.origin === 'user' && c.consent.payload !== null ? 'force_include_applied' : 'force_include');
        const items = [{ r: c.request, user: c.user, referrer: c.payload.referrer, consent: c.consent, signer: null, group_following: 0 }];
        const consent = c.consent as Consent & { origin: 'user' };
        checkRoundTrip(items, [{ message: consent.request.message, payload: consent.payload?.message ?? null }], muts);
      }
    }), { seed: SEED, numRuns: RUNS * 2 });
    expect(accepted.force_include_applied ?? 0).toBeGreaterThan(0);
  });
});
