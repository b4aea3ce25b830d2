// Operator routes (X-Admin-Token, compared in constant time): markets, pause/resume, fees, credit,
// and the engine's vital signs.
import type { TemplatedApp } from 'uWebSockets.js';
import { emptyRequest, NO_MARKET, RequestKind, type Request } from '../engine/types.js';
import { ppmToRatio, ratioToPpm } from '../engine/rules.js';
import { ADMIN_TOKEN_HEADER } from './admin_auth.js';
import { getAndHead, markHead, openExchange, postRoute, queryWithinLimits, replyRejected, submit, type GatewayContext } from './context.js';
import { Reply } from './http_reply.js';
import { parseAddress } from './params.js';
import { marketRecord } from './views.js';
import { pendingInclusions } from './routes_programmes.js';
import { SnapshotMissedError, type SnapshotCoordinator } from '../snapshot/coordinator.js';
import { processMemory } from '../util/thread_memory.js';
import { stampsGivenBackTwice, stampsOutstanding, stampsPooled } from './stage_timings.js';
import { placementState } from '../util/thread_placement.js';

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

function onlyFields(reply: Reply, body: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const k of Object.keys(body)) {
    if (!allowed.includes(k)) {
      reply.error('INVALID_REQUEST', `unknown field ${JSON.stringify(k).slice(0, 40)}`);
      return false;
    }
  }
  return true;
}

function safeInt(reply: Reply, body: Record<string, unknown>, field: string): number | null {
  const v = body[field];
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
    reply.error('INVALID_REQUEST', `${field} must be an integer`);
    return null;
  }
  return v;
}

function marketOf(ctx: GatewayContext, reply: Reply, id: string): number | null {
  const m = ctx.rm.marketIndex(id);
  if (m < 0) {
    reply.error('MARKET_NOT_FOUND', `market ${JSON.stringify(id).slice(0, 40)} not found`);
    return null;
  }
  return m;
}

/** Admin requests run as the fee account (no address, no nonce). */
function submitAdmin(ctx: GatewayContext, reply: Reply, r: Request, address: string, done: () => void): void {
  submit(ctx, reply, r, address, (o) => (o.accepted ? done() : replyRejected(reply, o)));
}

function memoryRecord(): { rss_bytes: number; heap_used_bytes: number; heap_total_bytes: number; external_bytes: number; array_buffers_bytes: number } {
  const m = process.memoryUsage();
  return { rss_bytes: m.rss, heap_used_bytes: m.heapUsed, heap_total_bytes: m.heapTotal, external_bytes: m.external, array_buffers_bytes: m.arrayBuffers };
}

/**
 * How long GET /admin/memory waits for the worker threads' heaps: an idle thread answers in well
 * under 1 ms; a thread busy with a long task (a snapshot restore) is left out rather than waited for.
 */
const THREAD_MEMORY_WAIT_MS = 200;

/** On-demand snapshot attempts before POST /admin/snapshot answers 503 (each misses only under a flow). */
const SNAPSHOT_ATTEMPTS_MAX = 3;

/** An admin GET (and HEAD) route: the token first, then the query limits, then `fn`. */
function adminGet(app: TemplatedApp, ctx: GatewayContext, pattern: string, fn: (reply: Reply) => void): void {
  getAndHead(app, pattern, (res, req) => {
    const reply = openExchange(ctx, res);
    if (reply === null) return;
    markHead(reply, req);
    if (!ctx.admin.check(req.getHeader(ADMIN_TOKEN_HEADER))) {
      reply.error('UNAUTHORIZED', 'missing or wrong X-Admin-Token');
      return;
    }
    if (!queryWithinLimits(reply, req)) return;
    fn(reply);
  });
}

export function registerAdminRoutes(
  app: TemplatedApp, ctx: GatewayContext,
  da?: {
    stateRoot(): string | null; stateRootBatchId(): number; readonly recheck_mismatches: number;
    threadCounts?(): { messages_posted: number; store_commits: number } | null;
  },
  snapshots?: SnapshotCoordinator | null,
): void {
  const rm = ctx.rm;
  adminGet(app, ctx, '/admin/state', (reply) => {
    let open_orders = 0;
    for (const s of rm.open_orders_by_account.values()) open_orders += s.size;
    const assets: Record<string, string> = {};
    for (const a of ctx.cfg.assets) assets[a.symbol] = a.symbol === 'ETH' ? ZERO_ADDRESS : a.token_address;
    reply.ok({
      batch_id: String(rm.batch_id),
      state_root: da ? da.stateRoot() : null,
      state_root_batch_id: da ? String(da.stateRootBatchId()) : null,
      // The DA thread's hand-overs (docs/operations.md, "DA thread"): null without one.
      da_thread: da?.threadCounts?.() ?? null,
      operator_address: ctx.operator_address,
      settlement: {
        contract: ctx.cfg.settlement.contract, chain_id: ctx.cfg.settlement.chain_id, assets,
        link: ctx.settlement_status === null ? null : ctx.settlement_status(),
      },
      markets: rm.markets.map((mv) => ({ ...marketRecord(rm, mv), maker_fee_bps: mv.maker_fee_bps, taker_fee_bps: mv.taker_fee_bps })),
      accounts: rm.account_by_address.size,
      open_orders,
      rings: ctx.link.depths(),
      event_ring_wake: ctx.link.event_ring_bell ? 'bell' : 'atomics',
      // The answer spin at work (front.answer_spin_us): 0 when it is off or has no bell.
      answer_spin_turns: ctx.link.answer_spin_turns,
      inflight_requests: ctx.link.inflight(),
      // Asks for a batch handed to the matcher (the chain link's: refused forced entries, counts waiting for roots), and refused by its connection.
      batch_requests: { sent: ctx.link.batch_requests.sent, failed: ctx.link.batch_requests.failed },
      // Where the front and the matcher run (threads.pipeline_cpu; docs/operations.md "Thread placement"), null: off.
      thread_placement: placementState(),
      // Pooled stage stamps (stage_timings.ts): `outstanding` is the stamped requests in flight, 0
      // when idle; one that stays above 0 counts requests whose stamps never came back (a leak).
      stage_stamps: { outstanding: stampsOutstanding(), pooled: stampsPooled(), given_back_twice: stampsGivenBackTwice() },
      signatures_verified: ctx.signatures.verified,
      // Which library recovers signers on each checking thread (RINGBOOK_SECP256K1), as each thread reports it.
      secp256k1: ctx.secp256k1_threads(),
      // Workers serving, workers replaced after dying, and why the pool refuses checks (null: it works).
      verify_pool: ctx.verify_pool(),
      // The journal's files (data.mdb + wal.log), bytes; null without a local journal (a cluster gateway).
      journal_bytes: ctx.journal_bytes(),
      // Whether the journal writes (a failing write is retried, writes refused meanwhile): since when, the last error (null: no journal here).
      journal: ctx.journal(),
      pending_forced_inclusions: pendingInclusions(rm),
      recovery: ctx.link.recovery,
      // Published headers the DA thread recomputed differently on start (must stay 0).
      state_root_rechecks_failed: da ? da.recheck_mismatches : null,
      snapshots: snapshots ? { written: snapshots.written, dropped: snapshots.dropped, deferred: snapshots.deferred, last: snapshots.last } : null,
      uptime_s: Math.floor((Date.now() - ctx.started_ms) / 1000),
      // The long soak samples these every minute (bench/flood.ts --soak).
      memory: memoryRecord(),
    });
  });

  // Which thread holds memory: the process's RSS split into anonymous and file-backed pages, and
  // each answering thread's heap (the long soak samples this every minute: bench/flood.ts --soak).
  adminGet(app, ctx, '/admin/memory', (reply) => {
    void processMemory(THREAD_MEMORY_WAIT_MS, (ask) => ctx.link.askMemory(ask)).then((m) => {
      if (!reply.done) reply.ok(m);
    });
  });

  // On demand: the matcher captures its state between two batches; answered once the file is
  // written (docs/operations.md, "Snapshots").
  app.post('/admin/snapshot', postRoute(ctx, { admin: true }, (reply, body) => {
    if (!onlyFields(reply, body, [])) return;
    if (!snapshots) return void reply.error('INVALID_REQUEST', 'snapshots need the journal (this server runs without one)');
    const coordinator = snapshots;
    const attempt = (left: number): void => {
      coordinator.take().then(
        (r) => reply.ok({ ...r, batch_id: String(r.batch_id) }),
        (e: unknown) => {
          // Under a steady flow the read model can pass the captured batch (the fuzzer met it
          // twice in 1,500 requests): a busy condition, retried, then 503 OVERLOADED, never 500.
          if (!(e instanceof SnapshotMissedError)) return void reply.error('INTERNAL_ERROR', `snapshot failed: ${(e as Error).message}`);
          if (left > 0 && !reply.done) return attempt(left - 1);
          reply.error('OVERLOADED', `${e.message} (${SNAPSHOT_ATTEMPTS_MAX} attempts)`, 503);
        },
      );
    };
    attempt(SNAPSHOT_ATTEMPTS_MAX - 1);
  }));

  app.post('/admin/markets', postRoute(ctx, { admin: true }, (reply, body) => {
    if (!onlyFields(reply, body, ['id', 'base', 'quote', 'tick_size', 'lot_size'])) return;
    const base = typeof body.base === 'string' ? ctx.assets.get(body.base) : undefined;
    const quote = typeof body.quote === 'string' ? ctx.assets.get(body.quote) : undefined;
    if (base === undefined || quote === undefined) return void reply.error('INVALID_REQUEST', 'base and quote must be listed assets');
    if (body.id !== undefined && body.id !== `${body.base}-${body.quote}`) return void reply.error('INVALID_REQUEST', 'id must be BASE-QUOTE');
    const tick = safeInt(reply, body, 'tick_size');
    if (tick === null) return;
    const lot = safeInt(reply, body, 'lot_size');
    if (lot === null) return;
    const r = emptyRequest();
    r.kind = RequestKind.ADD_MARKET;
    r.asset = base.index;
    r.asset_quote = quote.index;
    r.tick_size_units = tick;
    r.lot_size_units = lot;
    submitAdmin(ctx, reply, r, ZERO_ADDRESS, () => {
      const m = rm.marketIndex(`${body.base}-${body.quote}`);
      reply.ok(marketRecord(rm, rm.markets[m]));
    });
  }));

  for (const [action, kind] of [['pause', RequestKind.PAUSE_MARKET], ['resume', RequestKind.RESUME_MARKET]] as const) {
    app.post(`/admin/markets/:id/${action}`, postRoute(ctx, { admin: true }, (reply, _body, params) => {
      const m = marketOf(ctx, reply, params[0]);
      if (m === null) return;
      const r = emptyRequest();
      r.kind = kind;
      r.market = m;
      submitAdmin(ctx, reply, r, ZERO_ADDRESS, () => reply.ok(marketRecord(rm, rm.markets[m])));
    }, 1));
  }

  const fees = (per_market: boolean) => postRoute(ctx, { admin: true }, (reply, body, params) => {
    if (!onlyFields(reply, body, ['maker_fee_bps', 'taker_fee_bps'])) return;
    const maker = safeInt(reply, body, 'maker_fee_bps');
    if (maker === null) return;
    const taker = safeInt(reply, body, 'taker_fee_bps');
    if (taker === null) return;
    let m = NO_MARKET;
    if (per_market) {
      const found = marketOf(ctx, reply, params[0]);
      if (found === null) return;
      m = found;
    }
    const r = emptyRequest();
    r.kind = RequestKind.SET_FEES;
    r.market = m;
    r.maker_fee_bps = maker;
    r.taker_fee_bps = taker;
    submitAdmin(ctx, reply, r, ZERO_ADDRESS, () => {
      if (m === NO_MARKET) reply.ok({ maker_fee_bps: rm.maker_fee_bps, taker_fee_bps: rm.taker_fee_bps });
      else reply.ok({ market_id: rm.markets[m].id, maker_fee_bps: rm.markets[m].maker_fee_bps, taker_fee_bps: rm.markets[m].taker_fee_bps });
    });
  }, per_market ? 1 : 0);
  app.put('/admin/fees', fees(false));
  app.put('/admin/markets/:id/fees', fees(true));

  app.put('/admin/accounts/:address/credit', postRoute(ctx, { admin: true }, (reply, body, params) => {
    if (!onlyFields(reply, body, ['credit_limit', 'auto_cancel_ratio'])) return;
    const a = parseAddress(params[0], 'address');
    if (!a.ok) return void reply.error('INVALID_REQUEST', a.message);
    const limit = safeInt(reply, body, 'credit_limit');
    if (limit === null) return;
    const ratio = body.auto_cancel_ratio;
    if (ratio !== undefined && (typeof ratio !== 'number' || !(ratio > 0 && ratio <= 1))) {
      return void reply.error('INVALID_REQUEST', 'auto_cancel_ratio must be a number in (0, 1]');
    }
    const r = emptyRequest();
    r.kind = RequestKind.SET_CREDIT;
    r.credit_limit_units = limit;
    // Parts per million: the engine compares with integers only.
    r.auto_cancel_ratio_ppm = ratio === undefined ? ctx.cfg.credit.auto_cancel_ratio_default_ppm : ratioToPpm(ratio);
    submitAdmin(ctx, reply, r, a.value, () => reply.ok({ address: a.value, credit_limit: limit, auto_cancel_ratio: ppmToRatio(r.auto_cancel_ratio_ppm) }));
  }, 1));
}
