// Market data GET routes: candles (GET /ohlcv/:market_id) and the leaderboard (GET /leaderboard),
// answered from src/marketdata (built from committed events), never by the matcher.
import type { TemplatedApp } from 'uWebSockets.js';
import { INTERVALS, type IntervalName } from '../marketdata/candles.js';
import type { MarketData } from '../marketdata/market_data.js';
import { getAndHead, getRoute, queryParams, uintParam, type GatewayContext } from './context.js';

/** Candles per call: at most 500, default 100 (spec). */
export const OHLCV_LIMIT_MAX = 500;
export const OHLCV_LIMIT_DEFAULT = 100;
/** Default `since`: 24 hours before the request. */
export const OHLCV_SINCE_DEFAULT_MS = 24 * 3_600_000;
export const LEADERBOARD_LIMIT_MAX = 1000;
export const LEADERBOARD_LIMIT_DEFAULT = 100;

/** ISO 8601: a date, or a date and time with seconds optional, fraction up to 3 digits and a required zone (Z or +hh:mm). */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

/** Milliseconds of an ISO 8601 time, or null when it is not one (or not a real date). */
export function parseIsoTime(text: string): number | null {
  if (!ISO_8601.test(text)) return null;
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) return null;
  // Date.parse rolls over impossible dates in some forms (2026-02-30): check the date part.
  const d = new Date(Date.UTC(Number(text.slice(0, 4)), Number(text.slice(5, 7)) - 1, Number(text.slice(8, 10))));
  if (d.getUTCMonth() + 1 !== Number(text.slice(5, 7)) || d.getUTCDate() !== Number(text.slice(8, 10))) return null;
  return ms;
}


export function registerMarketDataRoutes(app: TemplatedApp, ctx: GatewayContext, md: MarketData): void {
  const rm = ctx.rm;
  getAndHead(app, '/ohlcv/:market_id', getRoute(ctx, (reply, req) => {
    const id = req.getParameter(0) ?? '';
    const m = rm.marketIndex(id);
    if (m < 0) {
      reply.error('MARKET_NOT_FOUND', `market ${JSON.stringify(id).slice(0, 40)} not found`);
      return;
    }
    const q = queryParams(reply, req.getQuery() ?? '');
    if (q === null) return;
    const interval = q.get('interval') ?? '1h';
    if (!Object.prototype.hasOwnProperty.call(INTERVALS, interval)) {
      reply.error('INVALID_REQUEST', `interval must be one of ${Object.keys(INTERVALS).join(', ')}, got ${JSON.stringify(interval.slice(0, 20))}`);
      return;
    }
    const limit = uintParam(reply, q.get('limit'), 'limit', OHLCV_LIMIT_DEFAULT, 1, OHLCV_LIMIT_MAX);
    if (limit === null) return;
    const now = md.now();
    let since = now - OHLCV_SINCE_DEFAULT_MS;
    const since_text = q.get('since');
    if (since_text !== undefined) {
      const ms = parseIsoTime(since_text);
      if (ms === null) {
        reply.error('INVALID_REQUEST', `since must be an ISO 8601 time such as 2026-11-22T08:00:00Z, got ${JSON.stringify(since_text.slice(0, 40))}`);
        return;
      }
      since = ms;
    }
    reply.ok(md.candles.query(m, interval as IntervalName, since, limit, now));
  }));
  getAndHead(app, '/leaderboard', getRoute(ctx, (reply, req) => {
    const q = queryParams(reply, req.getQuery() ?? '');
    if (q === null) return;
    const limit = uintParam(reply, q.get('limit'), 'limit', LEADERBOARD_LIMIT_DEFAULT, 1, LEADERBOARD_LIMIT_MAX);
    if (limit === null) return;
    reply.ok(md.leaderboard.top(limit, (account) => rm.address_by_account[account] ?? ''));
  }));
}
