// Trading routes: order entry (orders, cancels, amends, cancel-all, batches: order_entry.ts, shared
// with the WebSocket `post` message), withdrawals, and deposits. Each signed one: shape check ->
// signature (verify pool) -> per-wallet limit -> matcher -> answer after commit.
import type { TemplatedApp } from 'uWebSockets.js';
import { onchainAmount, signWithdrawal } from '../auth/withdrawal.js';
import { emptyRequest, RequestKind } from '../engine/types.js';
import { MoneyFormatError, parseDecimalUnits } from '../money/index.js';
import { allowGet, allowWallet, postRoute, replyRejected, submit, type GatewayContext } from './context.js';
import type { Reply } from './http_reply.js';
import { clientIpKey } from './rate_limit.js';
import { ORDER_ENTRY_PATHS, runOrderEntry } from './order_entry.js';
import { runSigned } from './signed_route.js';
import { parseWithdrawal } from './signed_account_requests.js';
import { isBodyError, type AssetInfo } from './signed_body.js';
import { isAddress } from '../util/address.js';

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
  // Order entry: one implementation for HTTP and the WebSocket `post` message (order_entry.ts).
  for (const path of ORDER_ENTRY_PATHS) {
    // /orders/batch answers its group through runSignedGroup, which reads no stamps.
    app.post(path, postRoute(ctx, { admin: false, stamped: path !== '/orders/batch' }, (reply, body) => {
      runOrderEntry(ctx, reply, path, body);
    }));
  }
  app.post('/withdrawals', postRoute(ctx, { admin: false, stamped: true }, (reply, body) => {
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
  // The admin token is checked first, like on every admin route: before the body is read.
  app.post('/deposit', postRoute(ctx, {
    admin: !ctx.cfg.deposits.open, unauthorized: 'deposits need X-Admin-Token (or a server with deposits.open)',
  }, (reply, body) => {
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
  }));
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
    // Signed only once the batch that debited it is in a posted root: a frozen contract pays the
    // last posted root's balances, which must not still hold money already paid out.
    const posted = ctx.settlement_posted_batch === null ? null : ctx.settlement_posted_batch();
    if (posted !== null && pending.batch_id > posted) {
      return void reply.error('NOT_FOUND', `no signature yet: the withdrawal's batch ${pending.batch_id} is not in a root posted on chain (posted up to ${posted}); retry shortly`);
    }
    const { asset_address, amount_wei } = onchainAmount(ctx.cfg.assets[asset.index], units);
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
