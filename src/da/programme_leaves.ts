// Leaves of the two programmes that are not order matching (docs/verifiability.md, "State root";
// docs/engine.md, "Referrals", "Forced inclusion"): referrals, what they earned, and the
// forced-inclusion inbox. Encoders take plain fields, so the event-side builder (state_root.ts)
// and a builder of leaves from a CanonicalState (snapshot restore) make byte-identical leaves; the
// `*Leaf` helpers also name the builder's leaf id, which both sides must share.
import type { CanonicalForcedRequest, CanonicalInboxEntry, CanonicalReferral, CanonicalState } from '../engine/api.js';
import {
  INBOX_CLIENT_ID_BYTES, INBOX_ENVELOPE_BYTES, INBOX_PAYLOAD_FIELDS, INBOX_VALUE_BYTES, LeafKind, accountKey, need,
  nonceValue, putU16, putU32, putU64, putU8, type PendingLeaf,
} from './state_leaves.js';

// ---------------------------------------------------------------------------------------------
// Envelope nonce: key account u32; value the account's last force-include envelope nonce u64
// (its own sequence, apart from the trading mark's NONCE leaf). Exists once the account sent an
// accepted envelope; never removed (the mark never goes back).

export function envelopeNonceLeaf(account: number, envelope_nonce: number): [string, PendingLeaf] {
  return [`12:${account}`, { kind: LeafKind.ENVELOPE_NONCE, key: accountKey(account), value: nonceValue(envelope_nonce) }];
}

// ---------------------------------------------------------------------------------------------
// Referral: key referred account u32; value referrer account u32, active_until_ms u64.
// Both never change once registered (one referrer per user, never changed: DECISIONS).

export function referralKey(referred: number): Uint8Array {
  const k = new Uint8Array(4); putU32(k, 0, referred); return k;
}
export function referralValue(referrer: number, active_until_ms: number): Uint8Array {
  const v = new Uint8Array(12); putU32(v, 0, referrer); putU64(v, 4, active_until_ms); return v;
}
export function referralLeafId(referred: number): string {
  return `9:${referred}`;
}
export function referralLeaf(referred: number, referrer: number, active_until_ms: number): [string, PendingLeaf] {
  return [referralLeafId(referred), { kind: LeafKind.REFERRAL, key: referralKey(referred), value: referralValue(referrer, active_until_ms) }];
}

// ---------------------------------------------------------------------------------------------
// Referral earnings: key referred account u32, asset u16; value earned u64 = the sum of every
// REFERRAL_SHARE paid to the referrer from this user's taker fees in that asset. A separate leaf
// per asset (not an array in the referral leaf) keeps every value fixed-width whatever the number
// of configured assets, and a share rehashes 8 bytes. The leaf exists once a share was paid
// (shares are > 0), and is never removed.

export function referralEarnedKey(referred: number, asset: number): Uint8Array {
  const k = new Uint8Array(6); putU32(k, 0, referred); putU16(k, 4, asset); return k;
}
export function referralEarnedValue(earned_units: number): Uint8Array {
  const v = new Uint8Array(8); putU64(v, 0, earned_units); return v;
}
export function referralEarnedLeafId(referred: number, asset: number): string {
  return `10:${referred}:${asset}`;
}
export function referralEarnedLeaf(referred: number, asset: number, earned_units: number): [string, PendingLeaf] {
  return [referralEarnedLeafId(referred, asset), {
    kind: LeafKind.REFERRAL_EARNED, key: referralEarnedKey(referred, asset), value: referralEarnedValue(earned_units),
  }];
}

/** The leaves of one canonical referral (its earnings leaves only for assets with a share paid). */
export function referralLeavesOfCanonical(r: CanonicalReferral): [string, PendingLeaf][] {
  const out: [string, PendingLeaf][] = [referralLeaf(r.account, r.referrer, r.active_until_ms)];
  r.earned_units.forEach((earned, asset) => {
    if (earned !== 0) out.push(referralEarnedLeaf(r.account, asset, earned));
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Inbox entry: key entry_id u64; value (INBOX_VALUE_BYTES = 169 bytes):
//   account u32, envelope_nonce u64, queued_ms u64, deadline_ms u64,
//   13 payload integers, each int64 (two's complement; a payload is untrusted input, so its
//   fields are written wide rather than checked against narrow widths, which would stop the
//   builder): kind, nonce, market, side, order_type, tif, price_units, quantity_units, order_id,
//   asset, amount_units, referrer_account, reject,
//   client_order_id length u8, then its bytes (one per char code, < 256), zero-padded to 36.
// Added by INBOX_QUEUED, removed by INBOX_INCLUDED.

/** An inbox entry as plain fields (CanonicalInboxEntry's, with the request flattened). */
export interface InboxLeafFields extends CanonicalForcedRequest {
  entry_id: number;
  account: number;
  envelope_nonce: number;
  queued_ms: number;
  deadline_ms: number;
}

export function inboxKey(entry_id: number): Uint8Array {
  const k = new Uint8Array(8); putU64(k, 0, entry_id); return k;
}

export function inboxValue(e: InboxLeafFields): Uint8Array {
  const v = new Uint8Array(INBOX_VALUE_BYTES);
  putU32(v, 0, e.account); putU64(v, 4, e.envelope_nonce); putU64(v, 12, e.queued_ms); putU64(v, 20, e.deadline_ms);
  INBOX_PAYLOAD_FIELDS.forEach((name, i) => putU64(v, INBOX_ENVELOPE_BYTES + 8 * i, e[name]));
  const at = INBOX_ENVELOPE_BYTES + 8 * INBOX_PAYLOAD_FIELDS.length;
  const coid = e.client_order_id;
  if (coid.length > INBOX_CLIENT_ID_BYTES) need(false, `client order id of ${coid.length} chars exceeds ${INBOX_CLIENT_ID_BYTES}`);
  putU8(v, at, coid.length);
  for (let i = 0; i < coid.length; i++) putU8(v, at + 1 + i, coid.charCodeAt(i));
  return v;
}

export function inboxLeafId(entry_id: number): string {
  return `11:${entry_id}`;
}

export function inboxLeaf(e: InboxLeafFields): [string, PendingLeaf] {
  return [inboxLeafId(e.entry_id), { kind: LeafKind.INBOX_ENTRY, key: inboxKey(e.entry_id), value: inboxValue(e) }];
}

export function inboxFieldsOfCanonical(e: CanonicalInboxEntry): InboxLeafFields {
  return {
    entry_id: e.entry_id, account: e.account, envelope_nonce: e.envelope_nonce, queued_ms: e.queued_ms,
    deadline_ms: e.deadline_ms, ...e.request,
  };
}

// ---------------------------------------------------------------------------------------------
// Dead-man switch: key account u32; value deadline_ms u64. Set by an accepted CANCEL_AFTER with a
// timeout (batch time + timeout), removed by one with timeout 0 and by the DEAD_MAN_CANCEL that
// fires it.

export function deadManLeafId(account: number): string {
  return `16:${account}`;
}

/** The account's switch leaf; `deadline_ms` null removes it. */
export function deadManLeaf(account: number, deadline_ms: number | null): [string, PendingLeaf] {
  const k = new Uint8Array(4); putU32(k, 0, account);
  let v: Uint8Array | null = null;
  if (deadline_ms !== null) { v = new Uint8Array(8); putU64(v, 0, deadline_ms); }
  return [deadManLeafId(account), { kind: LeafKind.DEAD_MAN, key: k, value: v }];
}

/** Every programme leaf of a canonical state (envelope nonces, referrals, their earnings, the inbox, dead-man switches). */
export function programmeLeavesOfCanonical(s: Pick<CanonicalState, 'referrals' | 'inbox' | 'envelope_nonces' | 'dead_man'>): [string, PendingLeaf][] {
  const out: [string, PendingLeaf][] = [];
  for (const e of s.envelope_nonces) out.push(envelopeNonceLeaf(e.account, e.envelope_nonce));
  for (const r of s.referrals) out.push(...referralLeavesOfCanonical(r));
  for (const e of s.inbox) out.push(inboxLeaf(inboxFieldsOfCanonical(e)));
  for (const d of s.dead_man) out.push(deadManLeaf(d.account, d.deadline_ms));
  return out;
}
