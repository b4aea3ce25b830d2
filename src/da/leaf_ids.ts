// The state-root builder's leaf ids: one per kind and key, the StateTree's index of its leaves.
// The kinds nearly every request changes (balances, nonces, accounts, open orders and their
// terms) get numeric ids, kind x 2^48 + a number below 2^48; the rarer kinds keep strings
// (`kind:...`). Looking a leaf up by a fresh template string was ~5% of the DA thread at max
// rate (profile of bench/load.ts, 2026-11-26; a numeric Map key is ~4x cheaper to hash and
// compare). A number and a string never collide in a Map, and numbers of two kinds never do
// (each below 2^48 within its kind).
import { LeafKind } from './state_leaves.js';

export type LeafId = number | string;

const KIND_SPAN = 2 ** 48;
/** Balance keys (PendingSet's and balance ids): account (< 2^32) and asset (< 2^16) in one safe integer. */
export const BALANCE_KEY_SPAN = 65536;

function numericOr(kind: number, n: number, text: () => string): LeafId {
  return Number.isSafeInteger(n) && n >= 0 && n < KIND_SPAN ? kind * KIND_SPAN + n : text();
}

/** `account_asset`: account x 2^16 + asset (PendingSet's balance key). */
export function balanceLeafIdOf(account_asset: number): LeafId {
  return numericOr(LeafKind.BALANCE, account_asset, () => `1:${account_asset}`);
}

export function balanceLeafId(account: number, asset: number): LeafId {
  return asset >= 0 && asset < BALANCE_KEY_SPAN ? balanceLeafIdOf(account * BALANCE_KEY_SPAN + asset) : `1:${account}:${asset}`;
}

export function nonceLeafId(account: number): LeafId {
  return numericOr(LeafKind.NONCE, account, () => `2:${account}`);
}

export function accountLeafId(account: number): LeafId {
  return numericOr(LeafKind.ACCOUNT, account, () => `3:${account}`);
}

export function orderLeafId(order_id: number): LeafId {
  return numericOr(LeafKind.OPEN_ORDER, order_id, () => `4:${order_id}`);
}

export function orderTermsLeafId(order_id: number): LeafId {
  return numericOr(LeafKind.ORDER_TERMS, order_id, () => `15:${order_id}`);
}
