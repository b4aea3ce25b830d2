// The pool of Request objects the signed path reuses (issue 11, branch h11z): a parser takes one
// (pooledRequest), the signed path gives it back once its answer is written (releaseRequest).
import { emptyRequest, NO_MARKET, type Request } from '../engine/types.js';

/**
 * Requests of answered signed requests, kept for the next parse: a Request is ~28 fields (~250
 * bytes, and boxes for prices past 2^31), one per signed request on the front (issue 11, branch
 * h11z). The signed path gives a request back (releaseRequest) once its answer is written: from
 * then on nothing reads it (the ring holds a copy since the submit). Requests that never reach an
 * answer (refused, or a group's) are simply not given back. At most REQUEST_POOL_MAX kept: the
 * requests answered in one burst, well above the ~256 in flight of the load bench.
 */
export const REQUEST_POOL_MAX = 4096;
const request_pool: Request[] = [];

/** A Request with emptyRequest()'s values: a given-back one when there is one, else a new one. */
export function pooledRequest(): Request {
  const r = request_pool.pop();
  if (r === undefined) return emptyRequest();
  resetRequest(r);
  return r;
}

/** Gives `r` back once nothing will read it any more (after its signed request's answer). */
export function releaseRequest(r: Request): void {
  if (request_pool.length < REQUEST_POOL_MAX) request_pool.push(r);
}

/** Writes emptyRequest()'s values into `r` (test/gateway/signed_requests.test.ts checks every field of it). */
export function resetRequest(r: Request): void {
  r.kind = 0; r.account = 0; r.nonce = 0; r.market = NO_MARKET; r.side = 0; r.order_type = 0; r.tif = 0;
  r.price_units = 0; r.quantity_units = 0; r.order_id = 0; r.client_order_id = ''; r.asset = 0; r.asset_quote = 0;
  r.amount_units = 0; r.maker_fee_bps = 0; r.taker_fee_bps = 0; r.credit_limit_units = 0;
  r.auto_cancel_ratio_ppm = 0; r.tick_size_units = 0; r.lot_size_units = 0; r.referrer_account = 0;
  r.inner_kind = 0; r.inner_nonce = 0; r.inner_reject = 0; r.stp = 0; r.expires_after_ms = 0; r.signer = 0; r.agent_account = 0;
}
