// The front thread: wires the matcher link, the verify pool, the rate limiters and the routes
// onto one uWebSockets.js app, and owns start and clean stop.
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import uWS from 'uWebSockets.js';
import { addressFromPrivateKey } from '../auth/sign.js';
import { VerifyPool } from '../auth/verify_pool.js';
import { describeSecp256k1Threads } from '../auth/verify_pool_options.js';
import { VERIFY_WORKERS_START_WAIT_MS } from '../auth/verify_limits.js';
import { engineConfigOf } from '../config/read.js';
import type { RingbookConfig } from '../config/types.js';
import { AdminTokenCheck } from './admin_auth.js';
import type { GatewayContext } from './context.js';
import { ArrivalOrder } from './arrival_order.js';
import { SignatureBatcher } from './signature_batcher.js';
import { MatcherLink } from './matcher_link.js';
import type { FrontSnapshots, MatcherBackend } from './matcher_link_options.js';
import { createRateLimiters } from './rate_limit.js';
import { createFailedSignatureBudget } from './failed_signatures.js';
import { registerAdminRoutes } from './routes_admin.js';
import { healthCheck, registerPublicRoutes } from './routes_public.js';
import { HealthListener } from './health_listener.js';
import { journalBytes, journalState } from './journal_state.js';
import { registerTradingRoutes } from './routes_trading.js';
import { registerProgrammeRoutes } from './routes_programmes.js';
import { registerAgentRoutes } from './routes_agents.js';
import type { AssetInfo } from './signed_body.js';
import { registerWebSocket, type WsHub } from './ws/hub.js';
import type { DaPublisher } from '../da/da_interfaces.js';
import { createDaPublisher } from '../da/da_thread.js';
import { registerDaRoutes } from './routes_da.js';
import { listenApp, registerNotFound } from './listen.js';
import { registerWebRoutes } from './routes_web.js';
import { MarketData } from '../marketdata/market_data.js';
import { readModelLimits } from '../read_model/read_model.js';
import { registerMarketDataRoutes } from './routes_marketdata.js';
import { SnapshotCoordinator } from '../snapshot/coordinator.js';
import { importFront } from '../snapshot/front_state.js';
import { loadRecoverySnapshot } from '../snapshot/resume.js';
import { StageRecorder } from './stage_timings.js';
import { ChainLink, type ChainReaderGate } from './chain_link.js';
import { Metrics } from './metrics/metrics.js';
import { MetricsListener } from './metrics/listener.js';
import { componentLog } from '../util/log.js';
import { stopFailedStart } from '../util/failed_start_stop.js';

const log = componentLog('server');

/**
 * `p`, or less once `abort` fires (already fired: at once): which of the two ended the wait
 * ('aborted' only when the abort came first, so a caller can say what it waited for).
 */
async function untilAborted(p: Promise<void>, abort: AbortSignal | undefined): Promise<'settled' | 'aborted'> {
  if (abort === undefined) return p.then(() => 'settled');
  if (abort.aborted) return 'aborted';
  let onAbort = (): void => {};
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    abort.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([p.then(() => 'settled' as const), aborted]);
  } finally {
    abort.removeEventListener('abort', onAbort);
  }
}

export interface ServerOptions {
  cfg: RingbookConfig;
  admin_token: string;
  operator_key: string;
  /** Journal on (the default) or off (pipeline tests only: nothing is durable). */
  journal?: boolean;
  /** Verify pool threads (default: cores - 1). */
  verify_threads?: number;
  /**
   * The cluster gateway (src/cluster/): the matcher runs elsewhere, reached through this backend;
   * this process keeps no journal and takes no snapshots (the replicated logs are the record).
   */
  backend?: MatcherBackend;
  /** First request seq minus one (MatcherLinkOptions.seq_base). */
  seq_base?: number;
  /**
   * Run the DA thread (state roots, GET /da/*; default true). False only with a `backend`: the
   * cluster gateway leaves roots to the matchers and the DA role (docs/scale-out.md).
   */
  state_roots?: boolean;
  /**
   * A cluster gateway's chain reader lease (src/cluster/lease.ts ChainReaderLease): its chain link
   * reads the contract's events only while it holds it. Absent: the single process, which reads always.
   */
  chain_reader?: ChainReaderGate;
  /** A cluster gateway's snapshots of its read model (src/cluster/gateway_snapshots.ts): resumed from, then taken. */
  front_snapshots?: FrontSnapshots;
}

/** Most keys each rate limiter remembers (bounded memory under a flood of wallets or IPs). */
const RATE_LIMIT_KEYS_MAX = 200_000;
/** How long a clean stop waits for in-flight requests before giving up on them. */
const STOP_DRAIN_MS_MAX = 10_000;

export class RingbookServer {
  private readonly options: ServerOptions;
  private listen_socket: uWS.us_listen_socket | null = null;
  private link: MatcherLink | null = null;
  private pool: VerifyPool | null = null;
  private ctx: GatewayContext | null = null;
  private ws_hub: WsHub | null = null;
  private da: DaPublisher | null = null;
  private snapshots: SnapshotCoordinator | null = null;
  private chain: ChainLink | null = null;
  private metrics: Metrics | null = null;
  private metrics_listener: MetricsListener | null = null;
  private health: HealthListener | null = null;
  port = 0;
  /** The metrics listener's port (0: metrics off or not listening). */
  metrics_port = 0;
  /** The health listener's port (config server.health_port), null without one. */
  health_port: number | null = null;

  constructor(options: ServerOptions) {
    this.options = options;
  }

  /**
   * Recovers, starts the threads and listens; the port. `stop_requested` (a SIGTERM during the
   * start, src/main.ts) ends the wait for the verify workers at once, and the start then returns
   * 0 without listening: the caller stops the server (stop()) as after any start.
   */
  async start(stop_requested?: AbortSignal): Promise<number> {
    const cfg = this.options.cfg;
    // The verify workers load (~0.1 s idle, up to a few seconds on a loaded machine) while the
    // journal is recovered, rather than after it (docs/benchmarks.md, "recovery", 2026-11-26).
    const pool = this.makeVerifyPool();
    const engine_config = engineConfigOf(cfg);
    const journal_dir = this.options.journal === false || this.options.backend !== undefined ? null : path.resolve(cfg.server.data_dir, 'journal');
    if (journal_dir !== null) mkdirSync(journal_dir, { recursive: true });
    const snapshots_dir = path.resolve(cfg.server.data_dir, 'snapshots');
    // Recovery: the newest usable snapshot (src/snapshot/recovery.ts), else genesis.
    const resume = journal_dir === null ? null : await loadRecoverySnapshot(cfg, journal_dir, snapshots_dir);
    const link = new MatcherLink({
      journal_dir,
      // Test seam only (test/journal/faults.test.ts): a control file that fails chosen writes.
      journal_fault_file: process.env.RINGBOOK_TEST_JOURNAL_FAULT_FILE ?? null,
      engine_config,
      request_ring_slots: cfg.limits.request_ring_slots,
      event_ring_slots: cfg.limits.event_ring_slots,
      batch_requests_max: cfg.limits.batch_requests_max,
      read_model: readModelLimits(cfg.limits),
      snapshot: resume === null ? null : { batch_id: resume.batch_id, engine: resume.engine },
      snapshot_every_batches: cfg.snapshots.every_batches,
      clock_offset_ms: cfg.clock_offset_ms,
      // Metrics read each batch's journal commit time from these stamps (3 clock reads a batch).
      stamp_batches: cfg.diagnostics.stage_timings || cfg.metrics.enabled,
      cpu: cfg.matcher.cpu,
      answer_spin_us: cfg.front.answer_spin_us,
      backend: this.options.backend,
      seq_base: this.options.seq_base,
      // The read model's part of the snapshot, loaded while the matcher restores its own.
      beforeEvents: () => {
        const front = resume?.front ?? this.options.front_snapshots?.resume_front ?? null;
        if (front !== null) importFront(link.read_model, md, front);
        this.options.front_snapshots?.attach(link.read_model, md, (fn) => link.addBatchListener(fn));
      },
    });
    // The consumers of the committed event stream, each batch in one synchronous turn, the HTTP
    // answers first (MatcherLink.dispatchBatch; docs/architecture.md):
    //   1. the read model decodes and applies each event; the answers collect the outcomes and are
    //      written at the commit marker; the observer tape records what the others are to hear;
    //   2. the DA packer reads the raw records (da.attach; the state root is computed from the
    //      records themselves, in the DA thread);
    //   3. the tape is replayed to (a) market data, (b) the WebSocket fan-out (added below, once the
    //      app exists: the journal replay has no subscribers) (MatcherLink.consumers);
    //   4. after each commit: metrics, the DA thread's flush, snapshots.
    // Without a DA thread (a cluster gateway by default) no state root is computed here: the
    // cluster's DA role publishes them and every matcher computes them (docs/scale-out.md).
    const da = this.options.state_roots === false ? null : createDaPublisher(cfg, journal_dir, { restore: resume?.da ?? null });
    da?.attach(link);
    // Before start: the journal replay rebuilds candles and the leaderboard (from the snapshot's).
    const md = new MarketData(link.read_model, { leaderboard_trades_max: cfg.limits.leaderboard_trades_max });
    link.consumers([md]);
    this.da = da;
    await link.start();
    this.link = link;
    // Resuming from a snapshot, the DA thread checked the root of its state against the published
    // one; a difference stops the start here.
    await da?.ready();
    let snapshots: SnapshotCoordinator | null = null;
    if (journal_dir !== null && da !== null) {
      snapshots = new SnapshotCoordinator({
        dir: snapshots_dir, every_batches: cfg.snapshots.every_batches, keep: cfg.snapshots.keep, trim_journal: cfg.journal.trim,
        link, rm: link.read_model, md, da, priority: cfg.threads.background,
        // Test seam only (test/snapshot/server.test.ts): holds the writer thread before its walks.
        hold_file: process.env.RINGBOOK_TEST_SNAPSHOT_HOLD_FILE ?? null,
      }, link.recovery?.batch_id ?? 0);
      this.snapshots = snapshots;
      const coordinator = snapshots;
      link.addBatchListener((batch_id) => coordinator.onBatchCommitted(batch_id));
    }
    const r = link.recovery;
    if (r !== null) {
      log.info(`ringbook: recovered ${r.snapshot_batch_id === null ? 'from genesis' : `from the snapshot at batch ${r.snapshot_batch_id}`}` +
        ` + ${r.replayed_batches} ${r.events_through === undefined ? 'journal' : 'event stream'} batches in ${Math.round(r.replay_ms)} ms (batch ${r.batch_id})`, { ...r });
    }
    const metrics = cfg.metrics.enabled ? new Metrics() : null;
    this.metrics = metrics;
    const assets = new Map<string, AssetInfo>();
    cfg.assets.forEach((a, index) => assets.set(a.symbol, { index, onchain_decimals: a.onchain_decimals }));
    const ctx: GatewayContext = {
      cfg,
      link,
      rm: link.read_model,
      signatures: new SignatureBatcher(pool, cfg.limits.verify_batch_max, cfg.verify.inline_items_max, cfg.verify.inline_busy_max_pct),
      limiters: createRateLimiters(cfg.rate_limits, { keys_max: RATE_LIMIT_KEYS_MAX }),
      failed_signatures: createFailedSignatureBudget(cfg.limits),
      admin: new AdminTokenCheck(this.options.admin_token),
      operator_key: this.options.operator_key,
      operator_address: addressFromPrivateKey(this.options.operator_key),
      assets,
      started_ms: Date.now(),
      open_exchanges: 0,
      closing: false,
      arrival: new ArrivalOrder(),
      stages: cfg.diagnostics.stage_timings ? new StageRecorder({ observe_gc: true }) : null,
      metrics,
      access_log: componentLog('http').enabled('debug'),
      settlement_status: null,
      settlement_posted_batch: null,
      da_backlog_batches: da === null ? null : () => da.backlogBatches(),
      secp256k1_threads: () => pool.secp256k1Threads(),
      verify_pool: () => pool.state(),
      // A cluster gateway keeps no journal: its state is the leader matcher's store (its status messages, gateway_backend.ts).
      journal: journal_dir === null && this.options.backend === undefined ? () => null : () => journalState(link),
      journal_bytes: journal_dir === null ? () => null : () => journalBytes(journal_dir),
    };
    this.ctx = ctx;
    if (cfg.settlement.rpc_url !== null) {
      const backend = this.options.backend;
      // In a cluster only a DA role posts roots (src/cluster/settlement_poster.ts, with
      // RINGBOOK_SETTLEMENT_POSTER=1): this gateway credits deposits, queues forced entries and shares
      // which batch took each entry in with it; it keeps no DA store to post from in any case.
      if (backend !== undefined) {
        log.warn('ringbook: settlement link: a cluster gateway posts no roots; the DA role with RINGBOOK_SETTLEMENT_POSTER=1 posts them (docs/settlement.md, "In a cluster")');
      }
      const chain = backend !== undefined
        ? new ChainLink(ctx, null, cfg.settlement, (from, batches) => backend.shareForced(from, batches), this.options.chain_reader ?? null)
        : new ChainLink(ctx, da?.store ?? null, cfg.settlement);
      ctx.settlement_status = () => ({ ...chain.status });
      ctx.settlement_posted_batch = () => chain.posted_batch_id;
      this.chain = chain;
    }
    const app = metrics === null ? uWS.App() : metrics.attach(uWS.App());
    registerPublicRoutes(app, ctx);
    registerTradingRoutes(app, ctx);
    registerProgrammeRoutes(app, ctx);
    registerAgentRoutes(app, ctx);
    registerAdminRoutes(app, ctx, da ?? undefined, snapshots);
    if (da !== null) registerDaRoutes(app, ctx, da, (m) => ctx.rm.markets[m]?.id ?? null);
    registerMarketDataRoutes(app, ctx, md);
    if (cfg.web.enabled) registerWebRoutes(app);
    const hub = registerWebSocket(app, ctx);
    this.ws_hub = hub;
    link.consumers([md, hub.fanout]);
    metrics?.bind({
      link, rm: link.read_model, pool, ws: hub.stats, da, failed_signatures: ctx.failed_signatures,
      pendingSignatures: () => ctx.signatures.pending, verifiedSignatures: () => ctx.signatures.verified,
    });
    this.chain?.start();
    registerNotFound(app);
    try {
      await this.awaitVerifyWorkers(pool, stop_requested);
    } catch (e) {
      await stopFailedStart(() => this.stop(), e);
      throw e;
    }
    if (stop_requested?.aborted) return 0;
    try {
      const listening = await listenApp(app, cfg.server.host, cfg.server.port);
      this.listen_socket = listening.socket;
      this.port = listening.port;
      if (metrics !== null) await this.listenMetrics(metrics);
      if (cfg.server.health_port !== null) {
        this.health = new HealthListener(() => healthCheck(ctx));
        this.health_port = await this.health.listen(cfg.server.host, cfg.server.health_port);
      }
    } catch (e) {
      // A port in use: the threads end (the journal and the DA store closed) before the start
      // fails, as above, so nothing writes the data dir while a failed first start empties it
      // (src/journal/start_claim.ts); bounded, so the start's error surfaces even if the stop hangs.
      await stopFailedStart(() => this.stop(), e);
      throw e;
    }
    return this.port;
  }

  /** The verify pool (this.pool from now on: stop() closes it); its workers start loading now. */
  private makeVerifyPool(): VerifyPool {
    const cfg = this.options.cfg;
    const pool = new VerifyPool({
      ...(this.options.verify_threads ? { threads: this.options.verify_threads } : {}),
      taskSize: cfg.verify.task_items_max,
      stealAfterUs: cfg.verify.steal_after_us,
      // Test seam only (test/server/start_verify_workers.test.ts): a worker that never starts or
      // dies before it serves (a broken build), in place of dist's verify_worker.js.
      ...(process.env.RINGBOOK_TEST_VERIFY_WORKER_FILE ? { workerFile: process.env.RINGBOOK_TEST_VERIFY_WORKER_FILE } : {}),
    });
    this.pool = pool;
    return pool;
  }

  /**
   * Waits for the verify workers to start serving (they started loading with the pool, ~0.1 s
   * idle, seconds on a loaded machine), at most VERIFY_WORKERS_START_WAIT_MS or until
   * `stop_requested`, and logs the secp256k1 library each reported. A worker still loading after
   * the wait is a warning (it takes its tasks once it serves; the front steals what waits, config
   * `verify.steal_after_us`). A pool broken by then, a worker that ended before it ever served
   * (a broken build), fails the start: listening, every signed request would be refused (503
   * OVERLOADED) until a restart with a good build.
   */
  private async awaitVerifyWorkers(pool: VerifyPool, stop_requested: AbortSignal | undefined): Promise<void> {
    const started_ms = performance.now();
    const ended_by = await untilAborted(pool.ready(VERIFY_WORKERS_START_WAIT_MS), stop_requested);
    const waited_ms = Math.round(performance.now() - started_ms);
    if (ended_by === 'aborted') {
      // Said because it is what ended the wait, not the workers or VERIFY_WORKERS_START_WAIT_MS
      // (test/server/start_verify_workers.test.ts tells the two apart by this line, not by a clock).
      const { threads, workers_ready } = pool.state();
      const not_started = threads - workers_ready;
      log.info(`ringbook: stop requested while waiting for the verify workers (${not_started} not started after ${waited_ms} ms): not listening`,
        { not_started, waited_ms });
      return;
    }
    if (stop_requested?.aborted) return;
    if (pool.broken !== null) {
      throw new Error(`the verify pool is broken: ${pool.broken.message}; ` +
        'not listening, as every signed request would fail (a broken or partial build? npx tsc -p tsconfig.json)', { cause: pool.broken });
    }
    const libraries = pool.secp256k1Threads();
    const line = `ringbook: secp256k1 library: ${describeSecp256k1Threads(libraries)}`;
    if (libraries.verify_workers.includes(null)) {
      log.warn(`${line} after waiting ${waited_ms} ms (VERIFY_WORKERS_START_WAIT_MS); a worker not started yet takes its tasks once it serves`,
        { secp256k1: libraries, waited_ms });
    } else {
      log.info(line, { secp256k1: libraries, waited_ms });
    }
  }

  /**
   * The metrics listener. An address in use (a second server on one machine, parallel tests) is
   * logged and leaves the server running without it: metrics are for watching, not for trading.
   */
  private async listenMetrics(metrics: Metrics): Promise<void> {
    const { host, port } = this.options.cfg.metrics;
    try {
      this.metrics_listener = await MetricsListener.start(metrics, host, port);
      this.metrics_port = this.metrics_listener.port;
      log.info(`ringbook: metrics on http://${host}:${this.metrics_port}/metrics`, { metrics_port: this.metrics_port });
    } catch (e) {
      log.error(`ringbook: metrics listener: cannot listen on ${host}:${port}; running without metrics (config metrics.port)`, e);
    }
  }

  /** SIGUSR2: request-path metrics recording off, or back on (docs/operations.md); the new state. */
  toggleMetricsRecording(): boolean | null {
    const m = this.metrics;
    if (m === null) return null;
    m.recording = !m.recording;
    log.info(`ringbook: metrics recording ${m.recording ? 'on' : 'off'}`, { recording: m.recording });
    return m.recording;
  }

  /**
   * Clean stop (SIGTERM): stop listening, let in-flight requests finish and be answered, let
   * the matcher apply and commit what is in its ring, then end the threads.
   */
  async stop(): Promise<void> {
    if (this.listen_socket) {
      uWS.us_listen_socket_close(this.listen_socket);
      this.listen_socket = null;
    }
    // Requests already received (reading their body, in signature checks, in the ring or in a
    // batch waiting for its commit) are finished and answered; new ones get 503 at once.
    const ctx = this.ctx;
    if (ctx) ctx.closing = true;
    await this.health?.close();
    await this.chain?.stop();
    await this.metrics_listener?.close();
    this.metrics?.detach();
    // WebSockets close first: a connection that opted into cancel_on_disconnect submits its
    // cancel as it closes, and the drain below waits for it like any request in flight.
    this.ws_hub?.close();
    await new Promise((r) => setImmediate(r));
    const link = this.link;
    const deadline = Date.now() + STOP_DRAIN_MS_MAX;
    const busy = (): boolean => (ctx !== null && ctx.open_exchanges > 0) || (link !== null && link.inflight() > 0);
    while (busy() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await this.snapshots?.close();
    if (link) await link.stop();
    await this.da?.close();
    if (this.pool) await this.pool.close();
    if (ctx?.stages) {
      const file = path.resolve(this.options.cfg.server.data_dir, 'stage_timings.f64');
      ctx.stages.close();
      ctx.stages.writeFile(file);
      log.info(`ringbook: ${ctx.stages.count} stage timing rows written to ${file}` +
        (ctx.stages.dropped > 0 ? ` (${ctx.stages.dropped} more not kept)` : ''), { file, rows: ctx.stages.count });
    }
  }
}
