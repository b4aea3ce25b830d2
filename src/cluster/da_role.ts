// The cluster's DA publisher (`ringbook start --role da`, docs/scale-out.md): reads the event
// stream in order and publishes every batch to its own DA store exactly as the single process's DA
// thread does, with the same DaPublisherCore (src/da/publisher.ts): each batch message's event
// records go through the state root builder, and at its BATCH_COMMITTED the core reads the batch's
// inputs (here from the same message, not a journal), computes the state and fills roots and
// submits the PublishedBatch to the LMDB DA store. The roots it computed are compared with the
// ones the leader matcher wrote in the message's header: a difference is an alarm (logged, counted
// in /status), like a standby's. Its HTTP port serves the DA routes of the single process
// (GET /da/batches, /da/batches/:id, /orders/:id/da-proof: src/gateway/routes_da.ts) and
// GET /status, so `ringbook verify --url <this role>` re-executes a cluster's history.
//
// Restart: the role reads the event stream from its first batch again; batches its store already
// holds are not re-published (the core's start path: their events are applied without hashing up
// to the last one, whose recomputed header is compared with the stored one).
import uWS from 'uWebSockets.js';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectCluster, type NatsCredentials } from './nats_auth.js';
import type { RingbookConfig } from '../config/types.js';
import type { BatchInputSource, RawJournalBatch } from '../da/da_interfaces.js';
import { LmdbDaStore } from '../da/da_store.js';
import { DaPublisherCore } from '../da/publisher.js';
import { inputHashOfBytes } from '../journal/journal_codec.js';
import { RECORD_WORDS, viewsOfRecords } from '../ring/records.js';
import { BatchField, EventCursor, EventReader, EventType, MarketField } from '../ring/event_records.js';
import { getAndHead, getRoute, type RouteBasics } from '../gateway/context.js';
import { listenApp, registerNotFound } from '../gateway/listen.js';
import { createRateLimiters } from '../gateway/rate_limit.js';
import { registerDaRoutes } from '../gateway/routes_da.js';
import { componentLog } from '../util/log.js';
import { SeqLogReader, type LogMessage } from './log_reader_seq.js';
import { SettlementPoster, type SettlementPosterStatus } from './settlement_poster.js';
import { LeaderCheckedRoots } from './checked_roots.js';
import { SettlementPosterLease } from './lease.js';
import { ensureStreams, EVENT_STREAM, EVENT_SUBJECT, EVENT_TIP_SUBJECT, readBatchHeader, RECORD_BYTES, type BatchHeader } from './log_format.js';

const log = componentLog('cluster');

/** Batch messages fetched by sequence at once, ahead of the one being published (as the gateway's). */
const EVENTS_FETCHED_MAX = 32;
/**
 * The DA store's writes are asynchronous (lmdb-js groups them); the role waits for them every this
 * many batches so that a store slower than the stream holds at most this many batches in memory.
 */
const BATCHES_UNSETTLED_MAX = 64;
/** Most keys the per-IP limiter of the DA routes remembers (as the gateway's). */
const RATE_LIMIT_KEYS_MAX = 200_000;

export interface ClusterDaOptions {
  nats_urls: string[];
  nats_credentials: NatsCredentials;
  node_id: string;
  replicas: number;
  cfg: RingbookConfig;
  /** The DA store's directory. */
  da_dir: string;
  /**
   * RINGBOOK_SETTLEMENT_POSTER=1: this role posts the cluster's roots to the settlement contract
   * (settlement_poster.ts) with this operator key while it holds the settlement poster lease;
   * null: it posts nothing.
   */
  settlement_poster: { operator_key: string } | null;
  /** RINGBOOK_LEASE_TTL_MS: the poster lease's TTL (a dead poster is replaced after about this). */
  lease_ttl_ms: number;
}

export interface DaRoleStatus {
  node_id: string;
  role: 'da';
  /** The last batch published (and readable from the store); -1 before genesis. */
  batch_id: number;
  state_root: string;
  /** Event stream sequence of that batch. */
  events_through: number;
  /** Batches submitted to the store by this run (batches already held on start are not counted). */
  published: number;
  /** Batches whose roots differ from the leader's header (an alarm each). */
  mismatches: number;
  /** Why publishing stopped (null while healthy). */
  failure: string | null;
  /** The settlement poster's status (null: this role posts no roots). */
  settlement: SettlementPosterStatus | null;
}

/** The inputs of the batch message being applied: the publisher reads them at its BATCH_COMMITTED. */
class MessageInputs implements BatchInputSource {
  current: RawJournalBatch | null = null;
  private readonly last_batch_id: number;

  constructor(last_batch_id: number) {
    this.last_batch_id = last_batch_id;
  }

  get(batch_id: number): RawJournalBatch | undefined {
    return this.current !== null && this.current.batch_id === batch_id ? this.current : undefined;
  }

  lastBatchId(): number {
    return this.last_batch_id;
  }

  async close(): Promise<void> {
    // nothing held
  }
}

export class ClusterDa {
  private readonly options: ClusterDaOptions;
  private nc: NatsConnection | null = null;
  private reader: SeqLogReader | null = null;
  private core: DaPublisherCore | null = null;
  private inputs: MessageInputs | null = null;
  private listen_socket: uWS.us_listen_socket | null = null;
  private ctx: RouteBasics | null = null;
  /** Market index -> `BASE-QUOTE`, from the MARKET events (the consent view of GET /da/batches/:id). */
  private readonly markets: string[] = [];
  private unsettled = 0;
  /** The batches compared with the leader's headers: no root from the first that differs on is posted. */
  private checked: LeaderCheckedRoots | null = null;
  private poster: SettlementPoster | null = null;
  private poster_lease: SettlementPosterLease | null = null;
  readonly status: DaRoleStatus;

  constructor(options: ClusterDaOptions) {
    this.options = options;
    this.status = {
      node_id: options.node_id, role: 'da', batch_id: -1, state_root: '', events_through: 0, published: 0, mismatches: 0, failure: null, settlement: null,
    };
  }

  /** Connects, opens the store, starts reading the event stream and serving; resolves with the HTTP port. */
  async start(): Promise<number> {
    const o = this.options;
    const nc = await connectCluster(o.nats_urls, o.nats_credentials, `ringbook-da-${o.node_id}`);
    this.nc = nc;
    const jsm = await ensureStreams(nc, { replicas: o.replicas });
    const inputs = new MessageInputs(await lastBatchInStream(jsm));
    this.inputs = inputs;
    const store = LmdbDaStore.open(o.da_dir);
    const core = new DaPublisherCore({
      assets: o.cfg.assets.map((a) => a.symbol), store, journal: inputs, log: (m) => log.error(m),
    });
    this.core = core;
    this.checked = new LeaderCheckedRoots(store);
    const port = await this.listen(core);
    // Without a consumer: the DA role's NATS user needs no consumer grant (log_reader_seq.ts).
    const reader = new SeqLogReader(nc, jsm, EVENT_STREAM, EVENT_SUBJECT, EVENT_TIP_SUBJECT, 1, `da ${o.node_id}`, EVENTS_FETCHED_MAX,
      (m) => this.onMessage(m));
    this.reader = reader;
    await reader.start();
    if (o.settlement_poster !== null) await this.startPoster(nc, jsm, o.settlement_poster.operator_key);
    return port;
  }

  private async onMessage(m: LogMessage): Promise<void> {
    const s = this.status;
    if (s.failure !== null) return;
    let h: BatchHeader;
    try {
      h = readBatchHeader(m.headers, m.data.length);
      if (h.batch_id !== s.batch_id + 1) throw new Error(`event stream: batch ${h.batch_id} follows batch ${s.batch_id} (sequence ${m.seq})`);
      this.publish(h, m.data);
    } catch (e) {
      this.fail(e instanceof Error ? e.message : String(e));
      return;
    }
    const core = this.core as DaPublisherCore;
    if (core.failure !== null) {
      this.fail(core.failure);
      return;
    }
    const state_root = core.stateRoot() ?? '';
    const stored = core.store?.get(h.batch_id)?.header;
    const fills_root = h.batch_id === 0 ? h.fills_root : stored?.fills_root;
    const checked = this.checked as LeaderCheckedRoots;
    if (!checked.check(h.batch_id, h, core.stateRootBatchId() === h.batch_id ? core.stateRoot() : null)) {
      s.mismatches++;
      log.error(`ALARM batch ${h.batch_id} published differently: state root ${state_root} vs the leader's ${h.state_root} ` +
        `(leader ${h.leader}), fills root ${String(fills_root)} vs ${h.fills_root}, stored state root ${String(stored?.state_root)}`, undefined, { batch_id: h.batch_id });
    }
    if (++this.unsettled >= BATCHES_UNSETTLED_MAX) {
      this.unsettled = 0;
      await core.settled();
    }
    s.batch_id = h.batch_id;
    s.state_root = state_root;
    s.events_through = m.seq;
    s.published = core.published;
  }

  /** Hands one batch message to the publisher: its inputs, then its event records in order. */
  private publish(h: BatchHeader, body: Uint8Array): void {
    const core = this.core as DaPublisherCore;
    const input_bytes = h.input_records * RECORD_BYTES;
    const inputs = Buffer.from(body.subarray(0, input_bytes));
    (this.inputs as MessageInputs).current = {
      batch_id: h.batch_id, time_ms: h.time_ms, count: h.input_records, inputs, input_hash: inputHashOfBytes(inputs),
    };
    // The body is a view into the connection's buffer, unaligned in general: an aligned copy.
    const copy = new Uint8Array(body.length - input_bytes);
    copy.set(body.subarray(input_bytes));
    const cursor = new EventCursor(new EventReader(viewsOfRecords(new Int32Array(copy.buffer))));
    const count = copy.length / RECORD_BYTES;
    let committed = false;
    for (let i = 0; i < count; i++) {
      cursor.o = i * RECORD_WORDS;
      const type = cursor.type();
      if (committed) throw new Error(`event stream: batch ${h.batch_id} has events after its commit`);
      core.onEvent(cursor);
      if (type === EventType.MARKET) this.noteMarket(cursor);
      if (type === EventType.BATCH_COMMITTED) {
        const id = cursor.field(BatchField.BATCH_ID);
        if (id !== h.batch_id) throw new Error(`event stream: message of batch ${h.batch_id} commits batch ${id}`);
        core.onBatch(id, cursor.field(BatchField.TIME_MS));
        committed = true;
      }
    }
    if (!committed) throw new Error(`event stream: batch ${h.batch_id} has no commit event`);
  }

  /**
   * Posts this store's roots: the batches published and compared with the leader's headers so
   * far, never one from the first that differed on (an alarm: the operator decides; checked_roots.ts),
   * while this role holds the settlement poster lease (one poster among the DA roles with the flag).
   */
  private async startPoster(nc: NatsConnection, jsm: JetStreamManager, operator_key: string): Promise<void> {
    const o = this.options;
    const lease = await SettlementPosterLease.start(nc, o.node_id, o.lease_ttl_ms, o.replicas);
    this.poster_lease = lease;
    const poster = new SettlementPoster({
      nc, node_id: o.node_id, settings: o.cfg.settlement, operator_key, roots: this.checked as LeaderCheckedRoots, lease,
      // A holder stuck short of it hands the lease over (settlement_poster.ts handOver).
      newest_batch: () => lastBatchInStream(jsm),
    });
    this.poster = poster;
    this.status.settlement = poster.status;
    poster.start();
  }

  private noteMarket(e: EventCursor): void {
    const assets = this.options.cfg.assets;
    const base = assets[e.field(MarketField.BASE_ASSET)]?.symbol;
    const quote = assets[e.field(MarketField.QUOTE_ASSET)]?.symbol;
    if (base !== undefined && quote !== undefined) this.markets[e.field(MarketField.MARKET)] = `${base}-${quote}`;
  }

  private fail(why: string): void {
    if (this.status.failure !== null) return;
    this.status.failure = why;
    log.error(`ringbook da ${this.options.node_id}: publishing stopped at batch ${this.status.batch_id}: ${why}`);
  }

  /** The DA routes of the single process and GET /status, on the config's HTTP host and port. */
  private async listen(core: DaPublisherCore): Promise<number> {
    const cfg = this.options.cfg;
    const ctx: RouteBasics = {
      cfg, metrics: null, stages: null, open_exchanges: 0, closing: false, access_log: componentLog('http').enabled('debug'),
      limiters: createRateLimiters(cfg.rate_limits, { keys_max: RATE_LIMIT_KEYS_MAX }),
    };
    this.ctx = ctx;
    const app = uWS.App();
    registerDaRoutes(app, ctx, core, (m) => this.markets[m] ?? null);
    getAndHead(app, '/status', getRoute(ctx, (reply) => void reply.ok(this.status)));
    registerNotFound(app, ' (a DA role serves /da/*, /orders/:id/da-proof and /status)');
    const listening = await listenApp(app, cfg.server.host, cfg.server.port);
    this.listen_socket = listening.socket;
    return listening.port;
  }

  /** Clean stop: stop reading, let the store finish its writes, stop serving. */
  async stop(): Promise<void> {
    if (this.ctx !== null) this.ctx.closing = true;
    await this.poster?.stop();
    // After the poster's last round: a clean stop hands posting over at once, not after the TTL.
    await this.poster_lease?.stop();
    await this.reader?.close();
    if (this.listen_socket !== null) {
      uWS.us_listen_socket_close(this.listen_socket);
      this.listen_socket = null;
    }
    await this.core?.settled();
    await this.core?.close();
    await this.nc?.drain();
  }
}

/** The batch id of the event stream's last message (0 when empty): batches up to it may already be in the store. */
async function lastBatchInStream(jsm: JetStreamManager): Promise<number> {
  const last_seq = (await jsm.streams.info(EVENT_STREAM)).state.last_seq;
  if (last_seq === 0) return 0;
  const m = await jsm.streams.getMessage(EVENT_STREAM, { seq: last_seq });
  return m === null ? 0 : readBatchHeader(m.header, m.data.length).batch_id;
}
