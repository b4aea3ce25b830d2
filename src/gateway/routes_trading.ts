// Signed trading routes (orders, cancels, amends, cancel-all, withdrawals) and deposits. Each one:
// shape check -> signature (verify pool) -> per-wallet limit -> matcher -> answer after commit.
import type { TemplatedApp } from 'uWebSockets.js';
import { signWithdrawal, ETH_ASSET_ADDRESS } from '../auth/withdrawal.js';
import { emptyRequest, RequestKind } from '../engine/types.js';
import { MoneyFormatError, parseDecimalUnits } from '../money/index.js';
import {
  afterVerification, allowGet, allowWallet, postRoute, replyRejected, submit, type GatewayContext, type LimiterName,
} from './context.js';
import type { Reply } from './envelope.js';
import type { Outcome } from './matcher_link.js';
import { clientIpKey } from './rate_limit.js';
import { signatureBytes } from '../ring/consent.js';
import {
  isBodyError, parseAmend, parseCancel, parseCancelAfter, parseCancelAll, parseOrder, parseWithdrawal,
  type AssetInfo, type BodyError, type SignedRequest,
} from './signed_requests.js';
import { orderRecord, immediateFill } from './views.js';
import { stampMs } from './stage_timings.js';
import { isAddress } from '../util/address.js';

export const LIMITER_OF: Record<SignedRequest['limit'], LimiterName> = {
  orders: 'orders_per_wallet',
  cancels: 'cancels_per_wallet',
  withdrawals: 'withdrawals_per_wallet',
};

function replyBodyError(reply: Reply, e: BodyError): void {
  reply.error(e.code, e.message);
}

/** Signature, then the wallet's rate limit, then the matcher. */
export function runSigned(ctx: GatewayContext, reply: Reply, parsed: SignedRequest | BodyError, onAccepted: (o: Outcome) => void): void {
  if (isBodyError(parsed)) {
    replyBodyError(reply, parsed);
    return;
  }
  const stamps = reply.stamps;
  if (stamps !== null) stamps.parsed = stampMs();
  const checks = ctx.signatures.verifyAny(parsed.messages, parsed.signature_hex, parsed.address, stamps);
  afterVerification(ctx, reply, parsed.address, checks, (message) => {
    if (message === null) {
      reply.error('INVALID_SIGNATURE', 'the signature does not recover to the request\'s address over any accepted message form (EIP-191 personal_sign, low-s)');
      return;
    }
    if (message !== parsed.messages[0] && parsed.json_form_only === true) {
      reply.error('INVALID_ORDER', 'an order with stp or expires_after_ms must be signed in the JSON form (the colon form cannot carry them)');
      return;
    }
    if (!allowWallet(ctx, reply, LIMITER_OF[parsed.limit], parsed.address)) return;
    submit(ctx, reply, parsed.request, parsed.address, (o) => {
      if (!o.accepted) replyRejected(reply, o);
      else onAccepted(o);
      if (stamps !== null && ctx.stages !== null) {
        stamps.answered = stampMs();
        ctx.stages.record(stamps);
      }
    }, parsed.referrer ?? null, { origin: 'user', request: { signature: signatureBytes(parsed.signature_hex), message }, payload: null });
  });
}

function orderReply(ctx: GatewayContext, reply: Reply, o: Outcome, with_fills: boolean): void {
  const order = ctx.rm.orders.get(o.order_id);
  if (order === undefined) {
    reply.error('INTERNAL_ERROR', 'accepted order missing from the read model');
    return;
  }
  const record = orderRecord(ctx.rm, order);
  if (with_fills) record.fills = o.fills.map(immediateFill);
  record.batch_id = String(o.batch_id);
  reply.ok(record);
}

/**
 * The unsigned money bodies (/deposit, /withdrawal-signature): only `allowed` fields, a `user`
 * address (lowercased), a listed `asset`, and `amount` as a decimal string in whole units.
 * Answers INVALID_REQUEST and returns null on the first problem.
 */
function parseUserAssetAmount(
  ctx: GatewayContext, reply: Reply, body: Record<string, unknown>, allowed: readonly string[], amount_message: string,
): { user: string; asset: AssetInfo; units: number } | null {
  const refuse = (message: string): null => {
    reply.error('INVALID_REQUEST', message);
    return null;
  };
  for (const k of Object.keys(body)) {
    if (!allowed.includes(k)) return refuse(`unknown field ${JSON.stringify(k).slice(0, 40)}`);
  }
  const user = isAddress(body.user) ? body.user.toLowerCase() : null;
  if (user === null) return refuse('user must be a 0x-prefixed 20-byte hex address');
  const asset = typeof body.asset === 'string' ? ctx.assets.get(body.asset) : undefined;
  if (asset === undefined) return refuse('asset must be one of ' + [...ctx.assets.keys()].join(', '));
  if (typeof body.amount !== 'string') return refuse(amount_message);
  try {
    return { user, asset, units: parseDecimalUnits(body.amount, { allow_negative: false }) };
  } catch (e) {
    return refuse(e instanceof MoneyFormatError ? `amount: ${e.message}` : 'amount is not a decimal');
  }
}

export function registerTradingRoutes(app: TemplatedApp, ctx: GatewayContext): void {
  const rm = ctx.rm;
  app.post('/orders', postRoute(ctx, { admin: false }, (reply, body) => {
    runSigned(ctx, reply, parseOrder(body, rm), (o) => orderReply(ctx, reply, o, true));
  }));
  app.post('/orders/cancel', postRoute(ctx, { admin: false }, (reply, body) => {
    runSigned(ctx, reply, parseCancel(body), (o) => orderReply(ctx, reply, o, false));
  }));
  app.post('/orders/amend', postRoute(ctx, { admin: false }, (reply, body) => {
    runSigned(ctx, reply, parseAmend(body), (o) => orderReply(ctx, reply, o, true));
  }));
  app.post('/orders/cancel-all', postRoute(ctx, { admin: false }, (reply, body) => {
    runSigned(ctx, reply, parseCancelAll(body, rm), (o) => {
      const cancelled = [];
      for (const id of o.order_updates) {
        const order = rm.orders.get(id);
        if (order) cancelled.push(orderRecord(rm, order));
      }
      reply.ok({ cancelled, batch_id: String(o.batch_id) });
    });
  }));
  app.post('/orders/cancel-after', postRoute(ctx, { admin: false }, (reply, body) => {
    const parsed = parseCancelAfter(body);
    runSigned(ctx, reply, parsed, (o) => {
      if (isBodyError(parsed)) return;
      // The engine armed the switch at the batch's time + timeout (docs/engine.md, CANCEL_AFTER).
      const timeout_ms = parsed.request.amount_units;
      reply.ok({
        deadline: timeout_ms === 0 ? null : new Date(o.time_ms + timeout_ms).toISOString(),
        batch_id: String(o.batch_id),
      });
    });
  }));
  app.post('/withdrawals', postRoute(ctx, { admin: false }, (reply, body) => {
    const parsed = parseWithdrawal(body, ctx.assets);
    runSigned(ctx, reply, parsed, () => {
      if (isBodyError(parsed)) return;
      const r = parsed.request;
      reply.ok({
        address: parsed.address,
        asset: ctx.cfg.assets[r.asset].symbol,
        amount: String(body.amount),
        amount_units: r.amount_units,
        nonce: r.nonce,
        status: 'pending',
      });
    });
  }));
  app.post('/deposit', (res, req) => {
    const admin_ok = ctx.cfg.deposits.open || ctx.admin.check(req.getHeader('x-admin-token'));
    postRoute(ctx, { admin: false }, (reply, body) => {
      if (!admin_ok) {
        reply.error('UNAUTHORIZED', 'deposits need X-Admin-Token (or a server with deposits.open)');
        return;
      }
      const parsed = parseUserAssetAmount(ctx, reply, body, ['user', 'asset', 'amount'], 'amount must be a decimal string, e.g. "1.5"');
      if (parsed === null) return;
      const { user, asset, units } = parsed;
      if (!allowWallet(ctx, reply, 'deposits_per_wallet', user)) return;
      const r = emptyRequest();
      r.kind = RequestKind.DEPOSIT;
      r.asset = asset.index;
      r.amount_units = units;
      submit(ctx, reply, r, user, (o) => {
        if (!o.accepted) return replyRejected(reply, o);
        const account = rm.account_by_address.get(user) ?? -1;
        const b = rm.balances.get(account);
        reply.ok({
          user, asset: body.asset, amount: units,
          balance: { available: b ? b[asset.index * 2] : 0, locked: b ? b[asset.index * 2 + 1] : 0 },
          batch_id: String(o.batch_id),
        });
      });
    })(res, req);
  });
  app.post('/withdrawal-signature', postRoute(ctx, { admin: false }, (reply, body) => {
    // Reads only (it can only release what the user signed); limited like a GET, per IP.
    if (!allowGet(ctx, reply, clientIpKey(reply.res))) return;
    const parsed = parseUserAssetAmount(ctx, reply, body, ['user', 'asset', 'amount', 'nonce'], 'amount must be a decimal string of whole units, e.g. "1.5"');
    if (parsed === null) return;
    const { user, asset, units } = parsed;
    if (typeof body.nonce !== 'number' || !Number.isSafeInteger(body.nonce) || body.nonce < 0) {
      return void reply.error('INVALID_REQUEST', 'nonce must be a non-negative integer');
    }
    const account = rm.account_by_address.get(user) ?? -1;
    const pending = rm.pending_withdrawals.get(`${account}:${body.nonce}`);
    if (pending === undefined || pending.asset !== asset.index || pending.amount !== units) {
      return void reply.error('NOT_FOUND', 'no pending withdrawal of this user with this asset, amount and nonce');
    }
    const settings = ctx.cfg.assets[asset.index];
    const asset_address = settings.symbol === 'ETH' ? ETH_ASSET_ADDRESS : settings.token_address;
    const amount_wei = BigInt(units) * 10n ** BigInt(settings.onchain_decimals - 6);
    const signature = signWithdrawal(ctx.operator_key, {
      settlement_contract: ctx.cfg.settlement.contract,
      chain_id: ctx.cfg.settlement.chain_id,
      user,
      asset_address,
      amount_wei,
      nonce: body.nonce,
    });
    reply.ok({ signature, user, asset: asset_address, amount_wei: amount_wei.toString(), nonce: body.nonce });
  }));
}
