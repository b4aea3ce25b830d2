// The configuration's shape: what validateConfig (read.ts) returns and the rest of the code reads.
// Every value here has been checked once at start (src/config/read.ts), so readers trust its limits.
import type { LogSettings } from '../util/log.js';
import type { ThreadPriority } from '../util/thread_priority.js';

export interface AssetSettings {
  symbol: string;
  token_address: string;
  onchain_decimals: number;
}

export interface MarketSettings {
  id: string;
  base: string;
  quote: string;
  tick_size: number;
  lot_size: number;
}

export interface RingbookConfig {
  /**
   * `health_port`: a second listener (node:http) answering only GET/HEAD /health, also over
   * HTTP/1.0 and without Host, for load balancers; the uWS port cannot (docs/api.md
   * "Connections"). null: none; 0: any free port.
   */
  server: { host: string; port: number; data_dir: string; health_port: number | null };
  assets: AssetSettings[];
  markets: MarketSettings[];
  fees: { maker_fee_bps: number; taker_fee_bps: number };
  rate_limits: {
    orders_per_wallet: number;
    cancels_per_wallet: number;
    deposits_per_wallet: number;
    withdrawals_per_wallet: number;
    gets_per_ip: number;
  };
  limits: {
    accounts_max: number;
    markets_max: number;
    orders_open_max: number;
    orders_open_per_account_max: number;
    price_levels_per_book_max: number;
    http_body_bytes_max: number;
    /**
     * A body over http_body_bytes_max but within this many bytes is read to its end and dropped
     * before the 400 answer (so the client reads it); a larger one is answered and cut off.
     */
    http_body_drain_bytes_max: number;
    /** Channels one WebSocket subscribe/unsubscribe message may name (more: one error, nothing done). */
    ws_channels_per_message_max: number;
    request_ring_slots: number;
    event_ring_slots: number;
    batch_requests_max: number;
    verify_batch_max: number;
    book_depth_max: number;
    fills_per_account_kept: number;
    trades_per_market_kept: number;
    /** Closed orders the read model keeps readable (GET /orders/:id), the newest ones. */
    closed_orders_kept: number;
    /** Fills the leaderboard's 30-day window keeps at most (72 bytes each); older ones drop out early. */
    leaderboard_trades_max: number;
    /**
     * Committed batches that may wait for their state root (the DA thread's queue); while that
     * many wait, new writes are answered 503 OVERLOADED until the DA thread catches up.
     */
    da_backlog_batches_max: number;
    /** WebSocket (src/gateway/ws/): largest client frame (uWS maxPayloadLength), bytes. */
    ws_message_bytes_max: number;
    ws_subscriptions_per_connection_max: number;
    ws_connections_per_ip_max: number;
    /** Bytes buffered for one connection before it is dropped as a slow reader. */
    ws_backpressure_bytes_max: number;
    /** Close a connection that sent nothing (message, ping or pong) for this long. */
    ws_idle_timeout_ms: number;
    /** A challenge nonce is valid this long (and for one auth). */
    ws_challenge_ttl_ms: number;
    /** After the first request_challenge, the connection must authenticate within this. */
    ws_auth_grace_ms: number;
    /** Failed auth attempts before the fatal AUTH_TIMEOUT. */
    ws_auth_failures_max: number;
    /** Levels per side in a book snapshot. */
    ws_book_depth_max: number;
    /** Forced-inclusion entries waiting, in all and per account (engine limits). */
    inbox_entries_max: number;
    inbox_entries_per_account_max: number;
    /** Items in one POST /orders/batch (DECISIONS: 20); at most REQUEST_GROUP_MAX (64). */
    orders_batch_items_max: number;
    /** WebSocket `post` requests one connection may have waiting for their answers. */
    ws_posts_in_flight_max: number;
    /**
     * Per-IP budget of signed requests whose signature failed verification (a token bucket:
     * `failed_signatures_per_ip_burst` at once, refilled at `failed_signatures_per_ip_per_s`).
     * While an IP's budget is empty its signed requests are refused 429 before verification
     * (src/gateway/failed_signatures.ts).
     */
    failed_signatures_per_ip_per_s: number;
    failed_signatures_per_ip_burst: number;
    /** IPs the failed-signature table holds at most (the least recently charged is evicted). */
    failed_signatures_ips_max: number;
  };
  /**
   * How long the sequencer holds forced inclusions before the engine forces them in (0: the next
   * batch). An engine rule: verifiers must use the same value. Below 24 hours (the deadline).
   */
  force_inclusion: { hold_ms: number };
  deposits: { open: boolean };
  /** `enabled`: serve the web view at `/` (docs/web.md); config/default.json turns it on, absent is off. */
  web: { enabled: boolean };
  settlement: SettlementSettings;
  /** Default auto-cancel ratio of SET_CREDIT, parts per million (config JSON: a fraction, `auto_cancel_ratio_default`). */
  credit: { auto_cancel_ratio_default_ppm: number };
  /**
   * Engine snapshots (docs/operations.md, "Snapshots"): one after every `every_batches` batches
   * (0: only on demand, POST /admin/snapshot), the `keep` newest kept.
   */
  snapshots: { every_batches: number; keep: number };
  /**
   * `trim`: delete journal batches at or below the oldest kept snapshot once the DA store has
   * them (recovery then needs that snapshot or a newer one); false keeps the whole journal.
   */
  journal: { trim: boolean };
  /**
   * `cpu`: pin the matcher thread to this CPU (Linux, `taskset`; docs/operations.md "Pinning the
   * matcher thread"); null (the default) leaves it to the scheduler. Below the machine's CPU count.
   */
  matcher: { cpu: number | null };
  /**
   * `background`: the scheduling priority the background threads (DA/state-root worker, snapshot
   * writer) give themselves at start (src/util/thread_priority.ts; docs/operations.md "Thread
   * priorities"), so that on few cores they yield to the threads an answer waits for.
   * `matcher_slice_us`: the EEVDF slice the matcher thread asks for (Linux >= 6.12,
   * src/util/thread_slice.ts), so that it gets a core sooner when a batch wakes it; null (the
   * default): the kernel's default slice.
   * `pipeline_cpu`: the CPU the front and the matcher share, every other server thread on the
   * other CPUs (src/util/thread_placement.ts; docs/operations.md "Thread placement"); null (the
   * default): no placement.
   */
  threads: { background: ThreadPriority; matcher_slice_us: number | null; pipeline_cpu: number | null };
  /**
   * `stage_timings`: stamp every signed request at each pipeline stage and write them to
   * `<data_dir>/stage_timings.f64` at a clean stop (bench/load.ts reads them; off by default).
   */
  diagnostics: { stage_timings: boolean };
  /**
   * The verify pool (src/auth/verify_pool.ts; docs/operations.md "The verify pool"):
   * `task_items_max` signature checks per task (a task's requests get their verdicts together when
   * it ends), `steal_after_us` how long a task may wait unstarted in a worker's ring before the
   * front thread checks it itself (0: never), `inline_items_max` how many checks of one event-loop
   * turn the front runs itself at light load instead of handing them to a worker (0: never),
   * `inline_busy_max_pct` the front's busy share (% of its last closed window of 10-20 ms) under which it runs them
   * even with verify tasks in flight (medium load; 0: at light load only).
   */
  verify: { task_items_max: number; steal_after_us: number; inline_items_max: number; inline_busy_max_pct: number };
  /**
   * The front thread (docs/operations.md "The front's answer spin"): `answer_spin_us`, while
   * requests it wrote wait for their commit at a light load, until how long (µs) after the oldest
   * waiting one's write it keeps its event loop turning instead of sleeping on the event ring (0,
   * the default: it sleeps at once; src/gateway/answer_spin.ts).
   */
  front: { answer_spin_us: number };
  /**
   * Prometheus metrics on their own listener (src/metrics/, docs/operations.md "Metrics"):
   * `enabled` false turns them off (no listener, nothing recorded on the request path).
   */
  metrics: { enabled: boolean; host: string; port: number };
  /** Structured logs (src/util/log.ts): pino level, and pino-pretty lines instead of JSON. */
  log: LogSettings;
  /** From the environment only (never from files): admin token and operator key, when set. */
  admin_token: string | null;
  operator_key: string | null;
  /**
   * From RINGBOOK_CLOCK_OFFSET_MS only (a testing aid, docs/operations.md): shifts the sequencer's
   * clock, so tests reach the end of the 90-day referral window or an inclusion deadline. 0 live.
   */
  clock_offset_ms: number;
}

/**
 * The settlement contract (docs/settlement.md). With `rpc_url` set, the server watches the
 * contract (deposits, forced inclusions) and posts each published batch's roots to it.
 */
export interface SettlementSettings {
  contract: string;
  chain_id: number;
  /** JSON-RPC endpoint of the chain (null: no chain link; withdrawal signatures still work). */
  rpc_url: string | null;
  /** How often the chain link polls the endpoint. */
  poll_ms: number;
  /** The block the contract was deployed in: where the watcher starts reading its events. */
  start_block: number;
  /** Most blocks one eth_getLogs call covers (public endpoints refuse wider ranges). */
  logs_blocks_max: number;
  /** Most batches whose roots one postRoots transaction carries (64: ~1.6M gas). */
  roots_per_tx_max: number;
}
