// Public and account GET routes: answered from the read model, never by the matcher.
import type { TemplatedApp } from 'uWebSockets.js';
import { OrderStatus } from '../engine/types.js';
import { getAndHead, getRoute, queryParams, uintParam, type GatewayContext } from './context.js';
import type { Reply } from './http_reply.js';
import { parseAddress } from './params.js';
import type { MarketView } from '../read_model/views.js';
import type { FillRows } from '../read_model/fill_rows.js';
import {
  accountFill, balancesRecord, bookRecord, feesRecord, marketRecord, orderRecord, publicTrade,
} from './views.js';


function marketParam(ctx: GatewayContext, reply: Reply, id: string): MarketView | null {
  const m = ctx.rm.marketIndex(id);
  if (m < 0) {
    reply.error('MARKET_NOT_FOUND', `market ${JSON.stringify(id).slice(0, 40)} not found`);
    return null;
  }
  return ctx.rm.markets[m];
}

/** The account id of an address path parameter: -1 for a valid address never seen (no account yet). */
function accountParam(ctx: GatewayContext, reply: Reply, text: string): { account: number; address: string } | null {
  const a = parseAddress(text, 'address');
  if (!a.ok) {
    reply.error('INVALID_REQUEST', a.message);
    return null;
  }
  return { account: ctx.rm.account_by_address.get(a.value) ?? -1, address: a.value };
}

const STATUS_FILTERS: Record<string, number[]> = {
  open: [OrderStatus.OPEN, OrderStatus.PARTIALLY_FILLED],
  partially_filled: [OrderStatus.PARTIALLY_FILLED],
  filled: [OrderStatus.FILLED],
  cancelled: [OrderStatus.CANCELLED],
  all: [OrderStatus.OPEN, OrderStatus.PARTIALLY_FILLED, OrderStatus.FILLED, OrderStatus.CANCELLED],
};

/** The data of a healthy GET /health. */
export interface HealthRecord {
  status: 'ok';
  batch_id: string;
  uptime_s: number;
}

/**
 * GET /health (also served by the health listener, health_listener.ts): the record (200) while
 * the server can serve, else why not, answered 503 OVERLOADED so that a load balancer takes the
 * server out:
 *  - its verify pool is broken (a worker that could not load): every signed request is refused
 *    until a restart;
 *  - a journal write fails (disk full, I/O error): every write is refused (context.ts
 *    writeRefusal, the same signal) while the matcher retries it; 200 again once a retry lands.
 * The reasons themselves (paths, the worker's or LMDB's error) are for operators, in GET
 * /admin/state `verify_pool` and `journal`, not on this public route; the message says since when.
 */
export function healthCheck(ctx: Pick<GatewayContext, 'rm' | 'started_ms' | 'verify_pool' | 'journal'>): { ok: true; data: HealthRecord } | { ok: false; message: string } {
  const reasons: string[] = [];
  const pool = ctx.verify_pool();
  if (pool.broken !== null) {
    reasons.push(`the verify pool is broken since ${new Date(pool.broken_at_ms ?? 0).toISOString()}: signed requests are ` +
      'refused (503 OVERLOADED), reads are served; the reason is in GET /admin/state verify_pool; restart the server');
  }
  const journal = ctx.journal();
  if (journal !== null && journal.status === 'failing') {
    reasons.push(`the journal cannot write since ${new Date(journal.failing_since_ms ?? 0).toISOString()}: writes are refused ` +
      '(503 OVERLOADED) and retried, reads are served; the error is in GET /admin/state journal');
  }
  if (reasons.length > 0) return { ok: false, message: `unhealthy: ${reasons.join('; and ')}` };
  return { ok: true, data: { status: 'ok', batch_id: String(ctx.rm.batch_id), uptime_s: Math.floor((Date.now() - ctx.started_ms) / 1000) } };
}

export function registerPublicRoutes(app: TemplatedApp, ctx: GatewayContext): void {
  const rm = ctx.rm;
  getAndHead(app, '/health', getRoute(ctx, (reply) => {
    const h = healthCheck(ctx);
    if (h.ok) reply.ok(h.data);
    else reply.error('OVERLOADED', h.message, 503);
  }));
  getAndHead(app, '/time', getRoute(ctx, (reply) => {
    const now = Date.now();
    reply.ok({ time_ms: now, iso: new Date(now).toISOString() });
  }));
  getAndHead(app, '/markets', getRoute(ctx, (reply) => {
    reply.ok(rm.markets.map((mv) => marketRecord(rm, mv)));
  }));
  const book = getRoute(ctx, (reply, req) => {
    const mv = marketParam(ctx, reply, req.getParameter(0) ?? '');
    if (mv === null) return;
    const q = queryParams(reply, req.getQuery() ?? '');
    if (q === null) return;
    const depth = uintParam(reply, q.get('depth'), 'depth', ctx.cfg.limits.book_depth_max, 1, ctx.cfg.limits.book_depth_max);
    if (depth === null) return;
    reply.ok(bookRecord(rm, mv, depth));
  });
  getAndHead(app, '/orderbook/:market_id', book);
  getAndHead(app, '/markets/:market_id/book', book);
  getAndHead(app, '/fees', getRoute(ctx, (reply) => {
    reply.ok({ maker_fee_bps: rm.maker_fee_bps, taker_fee_bps: rm.taker_fee_bps });
  }));
  getAndHead(app, '/markets/:market_id/fees', getRoute(ctx, (reply, req) => {
    const mv = marketParam(ctx, reply, req.getParameter(0) ?? '');
    if (mv !== null) reply.ok(feesRecord(mv));
  }));
  getAndHead(app, '/trades/:market_id', getRoute(ctx, (reply, req) => {
    const mv = marketParam(ctx, reply, req.getParameter(0) ?? '');
    if (mv === null) return;
    const q = queryParams(reply, req.getQuery() ?? '');
    if (q === null) return;
    const limit = uintParam(reply, q.get('limit'), 'limit', 100, 1, ctx.cfg.limits.trades_per_market_kept);
    if (limit === null) return;
    const trades = rm.trades_by_market[mv.index];
    const out = [];
    for (let i = (trades?.length ?? 0) - 1; i >= 0 && out.length < limit; i--) out.push(publicTrade(rm, trades.at(i)));
    reply.ok(out);
  }));
  getAndHead(app, '/account/:address/balances', getRoute(ctx, (reply, req) => {
    const a = accountParam(ctx, reply, req.getParameter(0) ?? '');
    if (a !== null) reply.ok(balancesRecord(rm, a.account));
  }));
  getAndHead(app, '/account/:address/orders', getRoute(ctx, (reply, req) => {
    const a = accountParam(ctx, reply, req.getParameter(0) ?? '');
    if (a === null) return;
    const q = queryParams(reply, req.getQuery() ?? '');
    if (q === null) return;
    const status = q.get('status') ?? 'open';
    const wanted = STATUS_FILTERS[status];
    if (!Object.prototype.hasOwnProperty.call(STATUS_FILTERS, status)) {
      reply.error('INVALID_REQUEST', 'status must be open, partially_filled, filled, cancelled or all');
      return;
    }
    let market = -1;
    const market_id = q.get('market_id');
    if (market_id !== undefined) {
      const mv = marketParam(ctx, reply, market_id);
      if (mv === null) return;
      market = mv.index;
    }
    const limit = uintParam(reply, q.get('limit'), 'limit', 100, 1, 1000);
    if (limit === null) return;
    const out = [];
    if (a.account >= 0) {
      // Newest first: order ids grow with time.
      const ids: number[] = [];
      if (status === 'open' || status === 'partially_filled') {
        for (const id of rm.open_orders_by_account.get(a.account) ?? []) ids.push(id);
      } else {
        for (const id of rm.order_ids_by_account.get(a.account) ?? []) ids.push(id);
      }
      ids.sort((x, y) => y - x);
      for (const id of ids) {
        const o = rm.orders.get(id);
        if (!o || !wanted.includes(o.status) || (market >= 0 && o.market !== market)) continue;
        out.push(orderRecord(rm, o));
        if (out.length >= limit) break;
      }
    }
    reply.ok(out);
  }));
  getAndHead(app, '/account/:address/orders/by-client-id/:client_order_id', getRoute(ctx, (reply, req) => {
    const a = accountParam(ctx, reply, req.getParameter(0) ?? '');
    if (a === null) return;
    let coid: string;
    try {
      coid = decodeURIComponent(req.getParameter(1) ?? '');
    } catch {
      reply.error('INVALID_REQUEST', 'client_order_id is not valid percent-encoding');
      return;
    }
    const o = a.account >= 0 ? rm.orderByClientId(a.account, coid) : undefined;
    if (o === undefined) {
      reply.error('NOT_FOUND', 'no order with that client_order_id for this account');
      return;
    }
    reply.ok(orderRecord(rm, o));
  }));
  getAndHead(app, '/account/:address/fills', getRoute(ctx, (reply, req) => {
    const a = accountParam(ctx, reply, req.getParameter(0) ?? '');
    if (a === null) return;
    const q = queryParams(reply, req.getQuery() ?? '');
    if (q === null) return;
    const limit = uintParam(reply, q.get('limit'), 'limit', 100, 1, ctx.cfg.limits.fills_per_account_kept);
    if (limit === null) return;
    const fills = a.account >= 0 ? rm.fills_by_account.get(a.account) : undefined;
    const out = [];
    for (let i = (fills?.length ?? 0) - 1; i >= 0 && out.length < limit; i--) out.push(accountFill(rm, (fills as FillRows).at(i)));
    reply.ok(out);
  }));
}

