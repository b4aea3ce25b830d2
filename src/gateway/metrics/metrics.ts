// Prometheus metrics (config `metrics`, docs/operations.md "Metrics"): the families, what feeds
// them, and the request path's share of the work.
//
// What the request path pays (the rest is read when Prometheus scrapes):
// - per HTTP exchange: one count in a Map per route, at the end of the exchange (Reply.finished);
// - per signed request: its stage stamps (9 clock reads, as with diagnostics.stage_timings) and 9
//   observations in BucketHistogram arrays (no allocation, no label hashing);
// - per committed batch: its size and journal commit time, from the BATCH_COMMITTED record the
//   matcher already writes (its stage stamps ride on it: no new message);
// - per DA message (one per event-loop turn of batches): the state-root times the DA thread adds
//   to the root report it already sends.
// Everything else (ring depths, verify queue, DA lag, WebSocket counters, engine gauges) is read
// from counters the server keeps anyway, in `collect()` callbacks at scrape time.
//
// `recording` (SIGUSR2 flips it: docs/operations.md) stops the request-path part while the
// listener keeps answering; bench/load.ts uses it to measure what metrics cost in one run.
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocketBehavior } from 'uWebSockets.js';
import type { VerifyPool } from '../../auth/verify_pool.js';
import type { DaPublisher } from '../../da/da_interfaces.js';
import { exchanges } from '../http_reply.js';
import type { MatcherLink } from '../matcher_link.js';
import { STAGES, type StageStamps } from '../stage_timings.js';
import type { ReadModel } from '../../read_model/read_model.js';
import type { BatchStages } from '../../read_model/views.js';
import { BucketHistogram, type BucketSeries } from './buckets.js';

/** Latency buckets, seconds: 10 µs .. 1 s (the signed path's stages run from ~5 µs to ~10 ms). */
const LATENCY_BUCKETS_S = [1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 1];
/** Requests per batch: powers of two up to limits.batch_requests_max's default (4096). */
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];

/** The WebSocket hub's counters the scrape reads (its WsStats; named here so this file needs no hub import). */
export interface WsCounters {
  connections: number;
  subscriptions: number;
  received: number;
  published: number;
  delivered: number;
  dropped_slow: number;
  closed_idle: number;
  closed_auth_timeout: number;
  refused_ip_limit: number;
}

/** The parts of the running server the scrape reads (bound once the server started). */
export interface MetricSources {
  link: MatcherLink;
  rm: ReadModel;
  pool: VerifyPool;
  /** Signatures queued in the front's batcher or being checked. */
  pendingSignatures: () => number;
  verifiedSignatures: () => number;
  ws: WsCounters | null;
  da: DaPublisher | null;
  /** The per-IP failed-signature budget's counts (RateLimiter peek_refusals, charges); null: off. */
  failed_signatures: { peek_refusals: number; charges: number } | null;
}

export class Metrics {
  readonly registry = new Registry();
  /** Request-path recording on (SIGUSR2 flips it); the scrape works either way. */
  recording = true;
  private sources: MetricSources | null = null;
  /** route -> status -> exchanges ended. */
  private readonly requests = new Map<string, Map<number, number>>();
  private readonly stage_series: BucketSeries[];
  private readonly signed_total: BucketSeries;
  private readonly batch_size: BucketSeries;
  private readonly journal_commit: BucketSeries;
  private readonly state_root: BucketSeries;
  private batches = 0;

  constructor() {
    const registry = this.registry;
    collectDefaultMetrics({ register: registry });
    const stages = new BucketHistogram({
      name: 'ringbook_signed_stage_seconds', label: 'stage', buckets: LATENCY_BUCKETS_S, registry,
      help: 'Signed requests: time in each pipeline stage (http_parse = body read and checks, verify_queue, verify, request_ring, batch_wait, matcher, journal_fsync = journal commit, answer)',
    });
    this.stage_series = STAGES.map((s) => stages.series(s));
    this.signed_total = new BucketHistogram({
      name: 'ringbook_signed_request_seconds', label: null, buckets: LATENCY_BUCKETS_S, registry,
      help: 'Signed requests: arrival to answer written (committed requests only)',
    }).series('');
    this.batch_size = new BucketHistogram({
      name: 'ringbook_batch_requests', label: null, buckets: BATCH_BUCKETS, registry, help: 'Requests per committed batch',
    }).series('');
    this.journal_commit = new BucketHistogram({
      name: 'ringbook_journal_commit_seconds', label: null, buckets: LATENCY_BUCKETS_S, registry,
      help: 'Per batch: applied to durable in the journal (one synchronous LMDB commit)',
    }).series('');
    this.state_root = new BucketHistogram({
      name: 'ringbook_state_root_seconds', label: null, buckets: LATENCY_BUCKETS_S, registry,
      help: 'Per batch: DA thread time computing the state and fills roots',
    }).series('');
    this.scrapeTimeFamilies();
  }

  /** Starts counting exchanges (Reply.finished) and names the routes of `app`'s handlers. */
  attach(app: TemplatedApp): TemplatedApp {
    exchanges.finished = (route, status) => {
      if (this.recording) this.countRequest(route, status);
    };
    return labelRoutes(app);
  }

  bind(sources: MetricSources): void {
    this.sources = sources;
    sources.link.addBatchStagesListener((requests, s) => this.observeBatch(requests, s));
    if (sources.da !== null) sources.da.onRootTimes = (ms) => this.observeRootTimes(ms);
  }

  /** Stops counting (server stop). */
  detach(): void {
    exchanges.finished = null;
  }

  countRequest(route: string, status: number): void {
    let by_status = this.requests.get(route);
    if (by_status === undefined) {
      by_status = new Map();
      this.requests.set(route, by_status);
    }
    by_status.set(status, (by_status.get(status) ?? 0) + 1);
  }

  /** A signed request's stamps once it was answered after its commit. */
  observeStages(s: StageStamps): void {
    if (!this.recording || s.durable === 0 || s.verify_end === 0) return;
    const series = this.stage_series;
    series[0].observe((s.parsed - s.arrive) / 1000);
    series[1].observe((s.verify_start - s.parsed) / 1000);
    series[2].observe((s.verify_end - s.verify_start) / 1000);
    series[3].observe((s.published - s.verify_end) / 1000);
    series[4].observe((s.batch_start - s.published) / 1000);
    series[5].observe((s.applied - s.batch_start) / 1000);
    series[6].observe((s.durable - s.applied) / 1000);
    series[7].observe((s.answered - s.durable) / 1000);
    this.signed_total.observe((s.answered - s.arrive) / 1000);
  }

  private observeBatch(requests: number, s: BatchStages): void {
    if (!this.recording) return;
    this.batches++;
    this.batch_size.observe(requests);
    if (s.durable_ms > 0) this.journal_commit.observe((s.durable_ms - s.applied_ms) / 1000);
  }

  private observeRootTimes(root_ms: readonly number[]): void {
    if (!this.recording) return;
    for (let i = 0; i < root_ms.length; i++) this.state_root.observe(root_ms[i] / 1000);
  }

  /** The Prometheus text of every family. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  /** Families read from the server's own counters when scraped. */
  private scrapeTimeFamilies(): void {
    const registers = [this.registry];
    const src = (): MetricSources | null => this.sources;
    const self = this;
    new Counter({
      name: 'ringbook_http_requests_total', help: 'HTTP exchanges ended, by route and status (status 0: the client went away first)',
      labelNames: ['route', 'status'], registers,
      collect() {
        this.reset();
        for (const [route, by_status] of self.requests) for (const [status, n] of by_status) this.inc({ route, status: String(status) }, n);
      },
    });
    new Counter({
      name: 'ringbook_batches_committed_total', help: 'Batches committed (journal durable) while recording', registers,
      collect() {
        this.reset();
        this.inc(self.batches);
      },
    });
    const gauge = (name: string, help: string, read: (s: MetricSources) => number): void => {
      new Gauge({
        name, help, registers,
        collect() {
          const s = src();
          if (s !== null) this.set(read(s));
        },
      });
    };
    const counter = (name: string, help: string, read: (s: MetricSources) => number): void => {
      new Counter({
        name, help, registers,
        collect() {
          const s = src();
          if (s === null) return;
          this.reset();
          this.inc(read(s));
        },
      });
    };
    new Gauge({
      name: 'ringbook_ring_depth_slots', help: 'Slots in use in the request and event rings', labelNames: ['ring'], registers,
      collect() {
        const s = src();
        if (s === null) return;
        const d = s.link.depths();
        this.set({ ring: 'request' }, d.request_ring);
        this.set({ ring: 'event' }, d.event_ring);
      },
    });
    counter('ringbook_request_ring_full_total', 'Requests refused with OVERLOADED because the request ring was full', (s) => s.link.requests.ring_full_count);
    gauge('ringbook_requests_in_flight', 'Requests written to the matcher and not yet answered', (s) => s.link.inflight());
    gauge('ringbook_verify_pool_queue_tasks', 'Verify pool tasks waiting for a free thread', (s) => s.pool.queuedTasks);
    gauge('ringbook_verify_pool_pending_tasks', 'Verify pool tasks submitted and not yet answered (queued or running)', (s) => s.pool.pendingTasks);
    gauge('ringbook_verify_pending_signatures', 'Signatures waiting in the front\'s batcher or being checked', (s) => s.pendingSignatures());
    counter('ringbook_verify_worker_restarts_total', 'Verify workers that died after they served and were replaced (their unanswered checks were answered 503 OVERLOADED)', (s) => s.pool.workerRestarts);
    gauge('ringbook_verify_workers_ready', 'Verify workers serving their ring now (a replacement still loading is not counted)', (s) => s.pool.state().workers_ready);
    gauge('ringbook_verify_pool_broken', '1 while the verify pool is broken (a worker could not load): every signed request is refused and GET /health answers 503', (s) => (s.pool.broken === null ? 0 : 1));
    counter('ringbook_signatures_verified_total', 'Signatures checked (by a verify worker or the front: ringbook_verify_front_checks_total)', (s) => s.verifiedSignatures());
    new Counter({
      name: 'ringbook_verify_front_checks_total',
      help: 'Signatures the front thread checked itself: inline = at its arrival, at light load (verify.inline_items_max) or while the front is quiet (verify.inline_busy_max_pct), stolen = its task waited in a worker\'s ring past verify.steal_after_us',
      labelNames: ['reason'], registers,
      collect() {
        const s = src();
        if (s === null) return;
        this.reset();
        this.inc({ reason: 'inline' }, s.pool.inlineChecked);
        this.inc({ reason: 'stolen' }, s.pool.stolenChecked);
      },
    });
    // Info-style: a series per (thread, library) in use, its value the threads calling it; a
    // worker not serving yet has no series. Alerting on library != "system" catches a machine
    // that lost its libsecp256k1 (~1.3x the CPU per recovery on npm, ~22-25x on noble).
    new Gauge({
      name: 'ringbook_secp256k1_threads', help: 'Threads recovering signers, by thread (front, verify_worker) and the secp256k1 library each calls (system, npm, noble; RINGBOOK_SECP256K1)',
      labelNames: ['thread', 'library'], registers,
      collect() {
        const s = src();
        if (s === null) return;
        this.reset();
        const t = s.pool.secp256k1Threads();
        this.set({ thread: 'front', library: t.front }, 1);
        for (const library of t.verify_workers) if (library !== null) this.inc({ thread: 'verify_worker', library });
      },
    });
    // From the front's copy of the matcher's journal_fault messages (journal_state.ts); 0 without a journal.
    gauge('ringbook_journal_failing', '1 while a journal write fails and is retried (disk full, I/O error): every write is refused 503 OVERLOADED and GET /health answers 503; alert on it', (s) => (s.link.journal_fault === null ? 0 : 1));
    gauge('ringbook_journal_failing_seconds', 'How long the journal write being retried has failed (0 while writes succeed)', (s) =>
      (s.link.journal_fault === null || s.link.journal_last_fault === null ? 0 : Math.max(0, Date.now() - s.link.journal_last_fault.since_ms) / 1000));
    counter('ringbook_journal_faults_total', 'Stretches of failing journal writes since the start (each ended when a retried write landed, or still failing)', (s) => s.link.journal_faults);
    gauge('ringbook_committed_batch_id', 'Last batch committed and applied by the front', (s) => s.rm.batch_id);
    gauge('ringbook_da_published_batch_id', 'Last batch whose state root the DA thread published (-1 before genesis)', (s) => s.da?.stateRootBatchId() ?? -1);
    // Counted from the front's committed batch to the last batch whose root is known: on a fresh
    // start, before the DA thread's first report, every committed batch from genesis (batch 0) on
    // is unpublished (committed + 1), not 0. 0 without a DA thread here (a cluster gateway: the
    // DA role publishes).
    gauge('ringbook_da_lag_batches', 'Batches committed but not yet published by the DA thread', (s) =>
      s.da === null ? 0 : Math.max(0, s.rm.batch_id - s.da.rootKnownBatchId()));
    gauge('ringbook_ws_connections', 'WebSocket connections open', (s) => s.ws?.connections ?? 0);
    gauge('ringbook_ws_subscriptions', 'WebSocket channel subscriptions held', (s) => s.ws?.subscriptions ?? 0);
    /** A counter with one label whose values are read from the WebSocket hub's counters. */
    const wsCounter = (name: string, help: string, label: string, read: (ws: WsCounters) => Record<string, number>): void => {
      new Counter({
        name, help, labelNames: [label], registers,
        collect() {
          const ws = src()?.ws;
          if (ws == null) return;
          this.reset();
          for (const [v, n] of Object.entries(read(ws))) this.inc({ [label]: v }, n);
        },
      });
    };
    wsCounter('ringbook_ws_messages_total', 'WebSocket messages: in = received from clients, out = queued to subscribers (one per subscriber)',
      'direction', (ws) => ({ in: ws.received, out: ws.delivered }));
    counter('ringbook_ws_published_total', 'WebSocket messages published (once per message, whatever the subscriber count)', (s) => s.ws?.published ?? 0);
    wsCounter('ringbook_ws_dropped_total', 'WebSocket connections the server closed: backpressure (slow reader), idle, auth_timeout; refused: over the per-IP limit',
      'reason', (ws) => ({
        backpressure: ws.dropped_slow, idle: ws.closed_idle, auth_timeout: ws.closed_auth_timeout, refused_ip_limit: ws.refused_ip_limit,
      }));
    gauge('ringbook_accounts', 'Accounts registered (engine, as the front\'s read model mirrors it)', (s) => s.rm.account_by_address.size);
    gauge('ringbook_open_orders', 'Orders resting in the books', (s) => {
      let n = 0;
      for (const set of s.rm.open_orders_by_account.values()) n += set.size;
      return n;
    });
    gauge('ringbook_price_levels', 'Price levels in all books (both sides)', (s) => {
      let n = 0;
      for (const m of s.rm.markets) n += m.bids.size + m.asks.size;
      return n;
    });
    gauge('ringbook_inbox_entries', 'Forced-inclusion inbox entries waiting', (s) => s.rm.programmes.pending.size);
    new Counter({
      name: 'ringbook_failed_signatures_total',
      help: 'Signed requests whose signature failed its check (failed, charged to the IP\'s budget), and requests refused 429 before their check while their IP\'s budget was empty (refused_unchecked)',
      labelNames: ['outcome'], registers,
      collect() {
        const b = src()?.failed_signatures ?? null;
        if (b === null) return;
        this.reset();
        this.inc({ outcome: 'failed' }, b.charges);
        this.inc({ outcome: 'refused_unchecked' }, b.peek_refusals);
      },
    });
    gauge('ringbook_metrics_recording', '1 while the request path records metrics (SIGUSR2 flips it)', () => (self.recording ? 1 : 0));
  }
}

const ROUTE_METHODS = ['get', 'post', 'put', 'del', 'patch', 'options', 'head', 'any'] as const;
type RouteMethod = (typeof ROUTE_METHODS)[number];

/**
 * `app` with each route handler wrapped: while the handler runs, `exchanges.route` names its
 * route (`POST /orders`, `GET /markets/:id/book`), which the Reply it makes keeps. A label per
 * pattern, never per URL, so the label count is the route count.
 */
function labelRoutes(app: TemplatedApp): TemplatedApp {
  const wrapped = new Proxy(app, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && (ROUTE_METHODS as readonly string[]).includes(prop)) {
        const method = prop as RouteMethod;
        const label_method = method === 'del' ? 'DELETE' : method.toUpperCase();
        return (pattern: string, handler: (res: HttpResponse, req: HttpRequest) => void) => {
          const label = `${label_method} ${pattern}`;
          target[method](pattern, (res, req) => {
            exchanges.route = label;
            try {
              handler(res, req);
            } finally {
              exchanges.route = '';
            }
          });
          return wrapped;
        };
      }
      if (prop === 'ws') {
        // The upgrade handler answers refusals (429 over the per-IP limit) with a Reply.
        return (pattern: string, behavior: WebSocketBehavior<unknown>) => {
          const upgrade = behavior.upgrade;
          const label = `WS ${pattern}`;
          target.ws(pattern, upgrade === undefined ? behavior : {
            ...behavior,
            upgrade: (res, req, context) => {
              exchanges.route = label;
              try {
                upgrade(res, req, context);
              } finally {
                exchanges.route = '';
              }
            },
          });
          return wrapped;
        };
      }
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return wrapped;
}
