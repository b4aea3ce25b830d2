// The signed bodies of account operations: withdrawals, agent approval and revocation, referral
// registration (order entry is signed_requests.ts). Shape only: values that need engine state are
// the engine's to judge.
import {
  approveAgentMessage, referralMessage, revokeAgentMessage, withdrawalMessage,
} from '../auth/messages.js';
import { RequestKind } from '../engine/types.js';
import { pooledRequest } from './request_pool.js';
import {
  address, DIGITS, fail, integer, isBodyError, nonce, signature, text, unknownField,
  type AssetInfo, type Body, type Result, type SignedRequest,
} from './signed_body.js';

/**
 * Withdrawal amounts are in the asset's on-chain smallest unit (wei for ETH, DECISIONS), as a
 * decimal string or a safe JSON integer; engine units are 10^(decimals - 6) of those.
 */
export function parseWithdrawal(body: Body, assets: Map<string, AssetInfo>): Result<SignedRequest> {
  const unknown = unknownField(body, ['address', 'asset', 'amount', 'nonce', 'signature']);
  if (unknown) return unknown;
  const user = address(body, 'address', 'INVALID_REQUEST');
  if (isBodyError(user)) return user;
  const symbol = text(body, 'asset', 'INVALID_REQUEST');
  if (isBodyError(symbol)) return symbol;
  const asset = assets.get(symbol);
  if (asset === undefined) return fail('INVALID_REQUEST', `unknown asset ${JSON.stringify(symbol).slice(0, 20)}`);
  const v = body.amount;
  let amount_text: string;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) amount_text = String(v);
  else if (typeof v === 'string' && DIGITS.test(v)) amount_text = v;
  else return fail('INVALID_REQUEST', 'amount must be a non-negative integer (decimal string or JSON integer) in the asset\'s smallest on-chain unit');
  const scale = 10n ** BigInt(asset.onchain_decimals - 6);
  const onchain = BigInt(amount_text);
  if (onchain % scale !== 0n) {
    return fail('INVALID_ORDER', `amount must be a multiple of ${scale} (one engine unit of ${symbol})`);
  }
  const units = onchain / scale;
  if (units > BigInt(Number.MAX_SAFE_INTEGER)) return fail('INVALID_REQUEST', 'amount is too large');
  const n = nonce(body);
  if (isBodyError(n)) return n;
  const sig = signature(body);
  if (isBodyError(sig)) return sig;
  const r = pooledRequest();
  r.kind = RequestKind.WITHDRAW;
  r.nonce = n;
  r.asset = asset.index;
  r.amount_units = Number(units);
  return {
    request: r, address: user, signature_hex: sig, limit: 'withdrawals',
    messages: [withdrawalMessage({ address: body.address as string, asset: symbol, amount: amount_text, nonce: n })],
  };
}

const AGENT_NAME = /^[A-Za-z0-9_.-]{1,16}$/;

/**
 * POST /agents `{user, agent, name, valid_until_ms, nonce, signature}`, signed by the user over the
 * agent address exactly as sent. valid_until_ms rides in amount_units and the name in
 * client_order_id (RequestKind.APPROVE_AGENT); its range is the engine's rule (batch time).
 */
export function parseApproveAgent(body: Body): Result<SignedRequest> {
  const unknown = unknownField(body, ['user', 'agent', 'name', 'valid_until_ms', 'nonce', 'signature']);
  if (unknown) return unknown;
  const user = address(body, 'user', 'INVALID_REQUEST');
  if (isBodyError(user)) return user;
  const agent = address(body, 'agent', 'INVALID_REQUEST');
  if (isBodyError(agent)) return agent;
  const name = text(body, 'name', 'INVALID_REQUEST');
  if (isBodyError(name)) return name;
  if (!AGENT_NAME.test(name)) return fail('INVALID_REQUEST', 'name must be 1 to 16 characters of [A-Za-z0-9_.-]');
  const valid_until_ms = integer(body, 'valid_until_ms', 'INVALID_REQUEST');
  if (isBodyError(valid_until_ms)) return valid_until_ms;
  const n = nonce(body);
  if (isBodyError(n)) return n;
  const sig = signature(body);
  if (isBodyError(sig)) return sig;
  const r = pooledRequest();
  r.kind = RequestKind.APPROVE_AGENT;
  r.nonce = n;
  r.amount_units = valid_until_ms;
  r.client_order_id = name;
  return {
    request: r, address: user, referrer: agent, signature_hex: sig, limit: 'withdrawals',
    messages: [approveAgentMessage({ agent: body.agent as string, name, valid_until_ms, nonce: n })],
  };
}

/** POST /agents/revoke `{user, agent, nonce, signature}`, signed by the user. */
export function parseRevokeAgent(body: Body): Result<SignedRequest> {
  const unknown = unknownField(body, ['user', 'agent', 'nonce', 'signature']);
  if (unknown) return unknown;
  const user = address(body, 'user', 'INVALID_REQUEST');
  if (isBodyError(user)) return user;
  const agent = address(body, 'agent', 'INVALID_REQUEST');
  if (isBodyError(agent)) return agent;
  const n = nonce(body);
  if (isBodyError(n)) return n;
  const sig = signature(body);
  if (isBodyError(sig)) return sig;
  const r = pooledRequest();
  r.kind = RequestKind.REVOKE_AGENT;
  r.nonce = n;
  return {
    request: r, address: user, referrer: agent, signature_hex: sig, limit: 'withdrawals',
    messages: [revokeAgentMessage({ agent: body.agent as string, nonce: n })],
  };
}

/** POST /referral/register: signed by the referred user over the addresses exactly as sent. */
export function parseReferral(body: Body): Result<SignedRequest> {
  const unknown = unknownField(body, ['referred', 'referrer', 'nonce', 'signature']);
  if (unknown) return unknown;
  const referred = address(body, 'referred', 'INVALID_REQUEST');
  if (isBodyError(referred)) return referred;
  const referrer = address(body, 'referrer', 'INVALID_REQUEST');
  if (isBodyError(referrer)) return referrer;
  const n = nonce(body);
  if (isBodyError(n)) return n;
  const sig = signature(body);
  if (isBodyError(sig)) return sig;
  const r = pooledRequest();
  r.kind = RequestKind.REFER;
  r.nonce = n;
  return {
    request: r, address: referred, referrer, signature_hex: sig, limit: 'withdrawals',
    messages: [referralMessage({ referred: body.referred as string, referrer: body.referrer as string, nonce: n })],
  };
}
