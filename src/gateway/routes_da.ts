// Data availability routes: published batches (the embedded DA layer) and fill proofs.
//   GET /da/batches/:id                 one published batch (NOT_FOUND when not published), with
//                                       `requests`: who asked for each request (consent_check.ts)
//   GET /da/batches?from=&limit=        consecutive batches from `from` (default 1), at most
//                                       `limit` (default and max 100) and about 8 MB of inputs
//   GET /orders/:id/da-proof[?fill_id=] proof of the order's latest fill (or of `fill_id`)
import type { TemplatedApp } from 'uWebSockets.js';
import type { DaPublisher } from '../da/da_interfaces.js';
import { FILL_LEAF_TYPES, fillLeafValues } from '../da/fills_tree.js';
import { batchToJson } from '../da/published.js';
import { consentOf, type ConsentLookup } from '../da/consent_check.js';
import { getAndHead, getRoute, uintParam, type RouteBasics } from './context.js';
import { parseQuery } from './params.js';

export const DA_BATCHES_PER_PAGE_MAX = 100;
/** Inputs hex characters per page beyond which no further batch is added (always at least one). */
const DA_PAGE_INPUT_CHARS_MAX = 8 * 1024 * 1024;

/**
 * `marketId`: a market index's name (`ETH-USDC`) for the consent view of a batch; the gateway reads
 * its read model, the cluster DA role the MARKET events it saw.
 */
export function registerDaRoutes(app: TemplatedApp, ctx: RouteBasics, publisher: DaPublisher, marketId: ConsentLookup['marketId']): void {
  const store = publisher.store;
  const lookup: ConsentLookup = { assets: ctx.cfg.assets, marketId };

  getAndHead(app, '/da/batches/:id', getRoute(ctx, (reply, req) => {
    const id = uintParam(reply, req.getParameter(0) ?? '', 'batch id', 0, 1, Number.MAX_SAFE_INTEGER);
    if (id === null) return;
    const b = store?.get(id);
    if (b === undefined) return void reply.error('NOT_FOUND', `batch ${id} is not published`);
    const consent = consentOf(Buffer.from(b.inputs_hex, 'hex'), lookup);
    reply.ok({ ...batchToJson(b), requests: consent.requests });
  }));

  getAndHead(app, '/da/batches', getRoute(ctx, (reply, req) => {
    const q = parseQuery(req.getQuery() ?? '');
    if (!q.ok) return void reply.error('INVALID_REQUEST', q.message);
    const from = uintParam(reply, q.value.get('from'), 'from', 1, 1, Number.MAX_SAFE_INTEGER);
    if (from === null) return;
    const limit = uintParam(reply, q.value.get('limit'), 'limit', DA_BATCHES_PER_PAGE_MAX, 1, DA_BATCHES_PER_PAGE_MAX);
    if (limit === null) return;
    const out: Record<string, unknown>[] = [];
    let chars = 0;
    const last = store?.latest() ?? 0;
    for (let id = from; id <= last && out.length < limit && chars < DA_PAGE_INPUT_CHARS_MAX; id++) {
      const b = store?.get(id);
      if (b === undefined) break;
      out.push(batchToJson(b));
      chars += b.inputs_hex.length;
    }
    reply.ok(out);
  }));

  getAndHead(app, '/orders/:id/da-proof', getRoute(ctx, (reply, req) => {
    const order_id = uintParam(reply, req.getParameter(0) ?? '', 'order id', 0, 1, Number.MAX_SAFE_INTEGER);
    if (order_id === null) return;
    const q = parseQuery(req.getQuery() ?? '');
    if (!q.ok) return void reply.error('INVALID_REQUEST', q.message);
    const fill_id = uintParam(reply, q.value.get('fill_id'), 'fill_id', 0, 1, Number.MAX_SAFE_INTEGER);
    if (fill_id === null) return;
    const refs = store?.fillsOfOrder(order_id) ?? [];
    const ref = fill_id === 0 ? refs[refs.length - 1] : refs.find((r) => r.fill_id === fill_id);
    if (ref === undefined) {
      return void reply.error('NOT_FOUND', fill_id === 0 ? `order ${order_id} has no published fill` : `fill ${fill_id} is not a published fill of order ${order_id}`);
    }
    const batch = store?.get(ref.batch_id);
    const index = batch === undefined ? -1 : batch.fills.findIndex((f) => f.fill_id === ref.fill_id);
    if (batch === undefined || index < 0) return void reply.error('NOT_FOUND', `fill ${ref.fill_id} is not in published batch ${ref.batch_id}`);
    const tree = publisher.fillsTree(batch);
    reply.ok({
      order_id,
      batch_id: String(ref.batch_id),
      merkle_root: tree.root(),
      merkle_proof: tree.proof(index),
      fill_hash: tree.leafHash(index),
      fill_id: ref.fill_id,
      leaf: fillLeafValues(batch.fills[index]),
      leaf_types: FILL_LEAF_TYPES,
    });
  }));
}
