// Configuration: config/default.json (the embedded defaults), merged with the JSON file named by
// RINGBOOK_CONFIG, then the RINGBOOK_* environment variables. Everything is validated here, once,
// so the rest of the code can trust its limits (TIGER_STYLE: assert at the boundary).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import path from 'node:path';
import type { EngineConfig } from './engine/api.js';
import { INBOX_ENTRIES_MAX_DEFAULT, INBOX_ENTRIES_PER_ACCOUNT_MAX_DEFAULT } from './engine/api.js';
import { feesValid } from './engine/engine_state.js';
import { FORCE_INCLUSION_DEADLINE_MS, ratioToPpm } from './engine/types.js';
import { RING_CAPACITY_SLOTS_MAX, RING_CAPACITY_SLOTS_MIN } from './ring/ring_layout.js';
import { ADDRESS_PATTERN } from './util/address.js';
import { absentSection, isPlainObject as isObject, KeyReads, unknownKeysMessage } from './util/config_keys.js';
import { REQUEST_GROUP_MAX } from './ring/request_records.js';
import { ringFutexChoice } from './ring/futex.js';
import { loopBellChoice } from './ring/loop_bell.js';
import { secp256k1Choice } from './auth/secp256k1_choice.js';
import { LOG_LEVELS, parseLogLevel, type LogSettings } from './util/log.js';
import { NICE_MAX, NICE_MIN, SCHED_POLICIES, type SchedPolicy, type ThreadPriority } from './util/thread_priority.js';
import {
  INLINE_BUSY_MAX_PCT_DEFAULT, INLINE_ITEMS_DEFAULT, INLINE_ITEMS_MAX, STEAL_AFTER_US_DEFAULT, STEAL_AFTER_US_MAX, TASK_SIZE_DEFAULT, TASK_SIZE_MAX,
} from './auth/verify_limits.js';

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
   */
  threads: { background: ThreadPriority };
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

export class ConfigError extends Error {}

/**
 * The leaderboard's window at most (30 days of fills otherwise): 72 bytes a fill, 144 MB when full
 * (src/marketdata/leaderboard.ts, which takes it as its default too).
 */
export const LEADERBOARD_TRADES_MAX_DEFAULT = 2_000_000;

const LIMIT_DEFAULTS: RingbookConfig['limits'] = {
  accounts_max: 1_000_000,
  markets_max: 256,
  orders_open_max: 2_000_000,
  orders_open_per_account_max: 10_000,
  price_levels_per_book_max: 100_000,
  http_body_bytes_max: 16 * 1024,
  // 4 MiB: a 1 MiB body (the size hostile clients tried, issue 20) is still answered; draining
  // it costs the front thread ~1 ms on loopback, and a larger one is cut off at once.
  http_body_drain_bytes_max: 4 * 1024 * 1024,
  // Every channel kind of every market and one private address fits in 64 for the default two
  // markets (2 x 3 public + 3 private = 9); 1,100 in one message was an amplifier (issue 20).
  ws_channels_per_message_max: 64,
  request_ring_slots: 1 << 14,
  event_ring_slots: 1 << 16,
  batch_requests_max: 4096,
  verify_batch_max: 128,
  book_depth_max: 500,
  fills_per_account_kept: 1000,
  trades_per_market_kept: 1000,
  // ~350 bytes a closed order in the front's heap (heap snapshot, issue 20): ~35 MB when full.
  closed_orders_kept: 100_000,
  leaderboard_trades_max: LEADERBOARD_TRADES_MAX_DEFAULT,
  // The DA thread runs at a lower priority (threads.background) and lagged by <= 185 batches
  // after 10 s at full speed on 2 cores (docs/benchmarks.md); 4,096 is ~30 s of max-rate
  // batches (~70 requests, ~13 KB of packed events each: ~50 MB queued at most).
  da_backlog_batches_max: 4096,
  ws_message_bytes_max: 16 * 1024,
  ws_subscriptions_per_connection_max: 100,
  ws_connections_per_ip_max: 256,
  ws_backpressure_bytes_max: 1024 * 1024,
  ws_idle_timeout_ms: 60_000,
  ws_challenge_ttl_ms: 60_000,
  ws_auth_grace_ms: 30_000,
  ws_auth_failures_max: 3,
  ws_book_depth_max: 1000,
  inbox_entries_max: INBOX_ENTRIES_MAX_DEFAULT,
  inbox_entries_per_account_max: INBOX_ENTRIES_PER_ACCOUNT_MAX_DEFAULT,
  orders_batch_items_max: 20,
  // A market maker requoting ~20 markets with one batch each keeps ~20 in flight; 64 leaves room
  // for cancels on top, and bounds what one socket can queue in the verify pool (64 x 20 items).
  ws_posts_in_flight_max: 64,
};

/** credit.auto_cancel_ratio_default when the config names none (a fraction, as the config writes it). */
const AUTO_CANCEL_RATIO_DEFAULT = 0.9;

/**
 * Limits that bound each other (each is also checked alone). A batch is drained from the request
 * ring, so it cannot hold more requests than the ring; a WebSocket book snapshot carries at least
 * the levels GET /markets/:id/book can answer, so a subscriber never sees less than a poller.
 */
function checkLimitRelations(l: RingbookConfig['limits']): void {
  need(l.batch_requests_max <= l.request_ring_slots, null,
    `limits.batch_requests_max (${l.batch_requests_max}) must not exceed limits.request_ring_slots (${l.request_ring_slots})`);
  need(l.http_body_bytes_max <= l.http_body_drain_bytes_max, null,
    `limits.http_body_bytes_max (${l.http_body_bytes_max}) must not exceed limits.http_body_drain_bytes_max (${l.http_body_drain_bytes_max})`);
  need(l.book_depth_max <= l.ws_book_depth_max, null,
    `limits.book_depth_max (${l.book_depth_max}) must not exceed limits.ws_book_depth_max (${l.ws_book_depth_max})`);
  need(l.inbox_entries_per_account_max <= l.inbox_entries_max, null,
    `limits.inbox_entries_per_account_max (${l.inbox_entries_per_account_max}) must not exceed limits.inbox_entries_max (${l.inbox_entries_max})`);
  need(l.orders_open_per_account_max <= l.orders_open_max, null,
    `limits.orders_open_per_account_max (${l.orders_open_per_account_max}) must not exceed limits.orders_open_max (${l.orders_open_max})`);
}

export function defaultConfigPath(): string {
  // dist/src/config.js and src/config.ts both sit two levels below the repo root.
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.resolve(here, '../config/default.json'), path.resolve(here, '../../config/default.json')];
  for (const c of candidates) {
    try {
      readFileSync(c);
      return c;
    } catch {
      // try the next one
    }
  }
  throw new ConfigError('config/default.json not found next to the program');
}


/**
 * Objects merge key by key; arrays and scalars replace. A key is set as an own data property, so a
 * file's `"__proto__"` neither changes a prototype nor vanishes: validateConfig refuses it as an
 * unknown key like any other.
 */
export function mergeConfig(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over;
  const out: Record<string, unknown> = {};
  for (const [k, v] of [...Object.entries(base), ...Object.entries(over)]) {
    const merged = Object.hasOwn(out, k) ? mergeConfig(out[k], v) : v;
    Object.defineProperty(out, k, { value: merged, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ConfigError(`cannot read config ${file}: ${(e as Error).message}`);
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): RingbookConfig {
  let raw = readJson(defaultConfigPath());
  if (env.RINGBOOK_CONFIG) raw = mergeConfig(raw, readJson(env.RINGBOOK_CONFIG));
  const cfg = validateConfig(raw);
  if (env.RINGBOOK_HOST) {
    // The pattern server.host is held to: `not a host` once reached the listen call and stopped
    // the start with a stack ('cannot listen on not a host:0') instead of a line naming the variable.
    if (!HOST_PATTERN.test(env.RINGBOOK_HOST)) throw new ConfigError('RINGBOOK_HOST must be an IP address or a host name (no port: RINGBOOK_PORT)');
    cfg.server.host = env.RINGBOOK_HOST;
  }
  if (env.RINGBOOK_PORT !== undefined && env.RINGBOOK_PORT !== '') {
    const port = Number(env.RINGBOOK_PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError('RINGBOOK_PORT must be 0..65535');
    cfg.server.port = port;
  }
  if (env.RINGBOOK_DATA_DIR) cfg.server.data_dir = env.RINGBOOK_DATA_DIR;
  cfg.admin_token = env.RINGBOOK_ADMIN_TOKEN ? env.RINGBOOK_ADMIN_TOKEN : null;
  if (env.RINGBOOK_OPERATOR_KEY) {
    if (!/^(0x)?[0-9a-fA-F]{64}$/.test(env.RINGBOOK_OPERATOR_KEY)) throw new ConfigError('RINGBOOK_OPERATOR_KEY must be 32 bytes of hex');
    cfg.operator_key = env.RINGBOOK_OPERATOR_KEY.startsWith('0x') ? env.RINGBOOK_OPERATOR_KEY : '0x' + env.RINGBOOK_OPERATOR_KEY;
  }
  if (env.RINGBOOK_CLOCK_OFFSET_MS !== undefined && env.RINGBOOK_CLOCK_OFFSET_MS !== '') {
    const offset = Number(env.RINGBOOK_CLOCK_OFFSET_MS);
    if (!/^-?[0-9]+$/.test(env.RINGBOOK_CLOCK_OFFSET_MS) || !Number.isSafeInteger(offset)) {
      throw new ConfigError('RINGBOOK_CLOCK_OFFSET_MS must be an integer number of milliseconds');
    }
    cfg.clock_offset_ms = offset;
  }
  if (env.RINGBOOK_LOG_LEVEL) {
    const level = parseLogLevel(env.RINGBOOK_LOG_LEVEL);
    if (level === null) throw new ConfigError(`RINGBOOK_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
    cfg.log.level = level;
  }
  if (env.RINGBOOK_LOG_PRETTY !== undefined && env.RINGBOOK_LOG_PRETTY !== '') {
    if (env.RINGBOOK_LOG_PRETTY !== '0' && env.RINGBOOK_LOG_PRETTY !== '1') throw new ConfigError('RINGBOOK_LOG_PRETTY must be 1 (pretty lines) or 0 (JSON lines)');
    cfg.log.pretty = env.RINGBOOK_LOG_PRETTY === '1';
  }
  // Read by each thread that makes or attaches a ring (ring/futex.ts); refused here so that a
  // misspelt value stops the start instead of silently leaving the native futex on.
  const futex = ringFutexChoice(env);
  if ('error' in futex) throw new ConfigError(futex.error);
  // The same for the front's sleep on the event ring (ring/loop_bell.ts).
  const bell = loopBellChoice(env);
  if ('error' in bell) throw new ConfigError(bell.error);
  // And for the library recovering signers (auth/secp256k1_choice.ts).
  const secp = secp256k1Choice(env);
  if ('error' in secp) throw new ConfigError(secp.error);
  return cfg;
}

function need<T>(ok: boolean, value: T, what: string): T {
  if (!ok) throw new ConfigError(`config: ${what}`);
  return value;
}

/**
 * An optional section (`verify`, `threads`, ...): absent is `{}` (every key at its default);
 * anything else but an object (`"verify": 3`, `null`, an array) is refused, naming the key, instead
 * of silently running on the defaults.
 */
function section(r: Record<string, unknown>, key: string): Record<string, unknown> {
  const x = r[key];
  if (x === undefined) return absentSection(r, key);
  return need(isObject(x), x as Record<string, unknown>, `${key} must be an object`);
}

function posInt(x: unknown, what: string): number {
  return need(typeof x === 'number' && Number.isSafeInteger(x) && x > 0, x as number, `${what} must be a positive integer`);
}

function int(x: unknown, what: string): number {
  return need(typeof x === 'number' && Number.isSafeInteger(x), x as number, `${what} must be an integer`);
}

/**
 * Longest front.answer_spin_us: 10 ms, far above a journal commit (~0.3 ms here): a spin that long
 * is a core spent per wait, not a latency setting.
 */
export const ANSWER_SPIN_US_MAX = 10_000;

/** An integer in lo..hi; the message names the range and `note` (what the ends mean). */
function intIn(x: unknown, lo: number, hi: number, what: string, note = ''): number {
  return need(typeof x === 'number' && Number.isSafeInteger(x) && x >= lo && x <= hi, x as number, `${what} must be an integer in ${lo}..${hi}${note}`);
}

function str(x: unknown, what: string, pattern: RegExp): string {
  return need(typeof x === 'string' && pattern.test(x), x as string, `${what} must match ${pattern}`);
}

const SYMBOL = /^[A-Z0-9]{1,12}$/;
const HOST_PATTERN = /^[0-9a-zA-Z.:[\]-]+$/;
/** The Prometheus exporters' customary port range starts at 9100; 9464 is the OpenTelemetry exporter's default. */
const METRICS_PORT_DEFAULT = 9464;

/**
 * `matcher.cpu`: null/absent (no pinning) or a CPU number the process may run on. Checked against
 * os.availableParallelism() (`cores`): pinning to a CPU this machine lacks would fail at start.
 */
export function matcherCpu(x: unknown, cores: number = os.availableParallelism()): number | null {
  if (x === undefined || x === null) return null;
  need(typeof x === 'number' && Number.isSafeInteger(x) && x >= 0 && x < cores, null,
    `matcher.cpu must be null or an integer CPU number in [0, ${cores - 1}] (this machine has ${cores} CPUs)`);
  return x as number;
}

/**
 * threads.background when the config does not say. Nice 10 gives the DA thread ~1/10 of a
 * latency-path thread's CPU share while both want a core (CFS weights 110 vs 1024), and
 * SCHED_BATCH keeps its wake-ups from preempting them. Measured on 2 cores (docs/benchmarks.md
 * "load", "Thread priorities and GC settings"): p99 at half the max rate 166 -> 56 ms (medians of 8
 * alternated pairs, better in 7), the DA backlog after a full-speed run <= 185 batches, drained
 * in < 0.3 s.
 */
export const THREAD_BACKGROUND_DEFAULT: ThreadPriority = { nice: 10, policy: 'batch' };

/**
 * `threads.background`: `{ nice, policy }`, each optional (absent: THREAD_BACKGROUND_DEFAULT's).
 * A negative nice is accepted (it needs CAP_SYS_NICE; without it the thread logs that it was not
 * set and runs at the default priority).
 */
export function threadPriority(x: unknown, key: string, dflt: ThreadPriority): ThreadPriority {
  if (x === undefined || x === null) return { ...dflt };
  need(isObject(x), null, `${key} must be an object { nice, policy }`);
  const o = x as Record<string, unknown>;
  const nice = o.nice ?? dflt.nice;
  need(typeof nice === 'number' && Number.isSafeInteger(nice) && nice >= NICE_MIN && nice <= NICE_MAX, null,
    `${key}.nice must be an integer in [${NICE_MIN}, ${NICE_MAX}]`);
  const policy = o.policy ?? dflt.policy;
  need(typeof policy === 'string' && (SCHED_POLICIES as readonly string[]).includes(policy), null,
    `${key}.policy must be one of ${SCHED_POLICIES.join(', ')}`);
  return { nice: nice as number, policy: policy as SchedPolicy };
}

/**
 * The whole config checked: every value (readConfig), then every key. A key readConfig never asked
 * for has no effect (a misspelt `verify.task_item_max`), so it stops the start, named with its path
 * and the known key it probably meant (src/util/config_keys.ts: the known keys are the ones readConfig
 * asks for, no second list). A value error throws first, alone: readConfig stopped there, so the
 * keys it had not reached yet are not known to be known, and listing "unknown" keys then would
 * name valid ones (docs/operations.md, "Configuration").
 */
export function validateConfig(raw: unknown): RingbookConfig {
  need(isObject(raw), null, 'top level must be an object');
  const reads = new KeyReads();
  const cfg = readConfig(reads.view(raw) as Record<string, unknown>);
  const unknown = reads.unknownKeys(raw);
  need(unknown.length === 0, null, unknownKeysMessage(unknown));
  return cfg;
}

/** Every value of the config, read (only) through `r`, the key-recording view of validateConfig. */
function readConfig(r: Record<string, unknown>): RingbookConfig {
  const server = need(isObject(r.server), r.server as Record<string, unknown>, 'server must be an object');
  const assets_raw = need(Array.isArray(r.assets) && r.assets.length > 0, r.assets as unknown[], 'assets must be a non-empty array');
  const assets: AssetSettings[] = assets_raw.map((a, i) => {
    need(isObject(a), null, `assets[${i}] must be an object`);
    const o = a as Record<string, unknown>;
    return {
      symbol: str(o.symbol, `assets[${i}].symbol`, SYMBOL),
      token_address: str(o.token_address, `assets[${i}].token_address`, ADDRESS_PATTERN).toLowerCase(),
      onchain_decimals: int(o.onchain_decimals, `assets[${i}].onchain_decimals`),
    };
  });
  const symbols = new Set(assets.map((a) => a.symbol));
  need(symbols.size === assets.length, null, 'asset symbols must be unique');
  for (const a of assets) need(a.onchain_decimals >= 6 && a.onchain_decimals <= 36, null, `${a.symbol}.onchain_decimals must be 6..36`);
  const markets_raw = need(Array.isArray(r.markets), r.markets as unknown[], 'markets must be an array');
  const markets: MarketSettings[] = markets_raw.map((m, i) => {
    need(isObject(m), null, `markets[${i}] must be an object`);
    const o = m as Record<string, unknown>;
    const mk: MarketSettings = {
      id: str(o.id, `markets[${i}].id`, /^[A-Z0-9]{1,12}-[A-Z0-9]{1,12}$/),
      base: str(o.base, `markets[${i}].base`, SYMBOL),
      quote: str(o.quote, `markets[${i}].quote`, SYMBOL),
      tick_size: posInt(o.tick_size, `markets[${i}].tick_size`),
      lot_size: posInt(o.lot_size, `markets[${i}].lot_size`),
    };
    need(mk.id === `${mk.base}-${mk.quote}`, null, `markets[${i}].id must be BASE-QUOTE`);
    need(symbols.has(mk.base) && symbols.has(mk.quote) && mk.base !== mk.quote, null, `markets[${i}] assets must be distinct listed assets`);
    // Keeps every fill notional exact (docs/engine.md): tick x lot a multiple of 1e6.
    need((BigInt(mk.tick_size) * BigInt(mk.lot_size)) % 1_000_000n === 0n, null, `markets[${i}]: tick_size x lot_size must be a multiple of 1,000,000`);
    return mk;
  });
  need(new Set(markets.map((m) => m.id)).size === markets.length, null, 'market ids must be unique');
  const fees = need(isObject(r.fees), r.fees as Record<string, unknown>, 'fees must be an object');
  const maker = int(fees.maker_fee_bps, 'fees.maker_fee_bps');
  const taker = int(fees.taker_fee_bps, 'fees.taker_fee_bps');
  // The engine's own rule (SET_FEES is judged by the same function), so a start cannot accept fees
  // the engine would refuse.
  need(feesValid(maker, taker), null, 'fees need -10000 <= maker, |maker| <= taker <= 10000');
  const rl = need(isObject(r.rate_limits), r.rate_limits as Record<string, unknown>, 'rate_limits must be an object');
  const limits_raw = section(r, 'limits');
  const limits = { ...LIMIT_DEFAULTS };
  for (const k of Object.keys(LIMIT_DEFAULTS) as (keyof RingbookConfig['limits'])[]) {
    if (limits_raw[k] !== undefined) limits[k] = posInt(limits_raw[k], `limits.${k}`);
  }
  for (const k of ['request_ring_slots', 'event_ring_slots'] as const) {
    need((limits[k] & (limits[k] - 1)) === 0, null, `limits.${k} must be a power of two`);
    need(limits[k] >= RING_CAPACITY_SLOTS_MIN && limits[k] <= RING_CAPACITY_SLOTS_MAX, null,
      `limits.${k} must be ${RING_CAPACITY_SLOTS_MIN}..${RING_CAPACITY_SLOTS_MAX} (the ring's bounds)`);
  }
  checkLimitRelations(limits);
  need(markets.length <= limits.markets_max, null, 'more markets than limits.markets_max');
  // One batch is one request group on the ring (src/ring/records.ts).
  need(limits.orders_batch_items_max <= REQUEST_GROUP_MAX, null, `limits.orders_batch_items_max must be at most ${REQUEST_GROUP_MAX}`);
  const settlement = need(isObject(r.settlement), r.settlement as Record<string, unknown>, 'settlement must be an object');
  const deposits = section(r, 'deposits');
  need(deposits.open === undefined || typeof deposits.open === 'boolean', null, 'deposits.open must be true or false');
  const web = section(r, 'web');
  need(web.enabled === undefined || typeof web.enabled === 'boolean', null, 'web.enabled must be true or false');
  const credit = section(r, 'credit');
  const ratio = credit.auto_cancel_ratio_default ?? AUTO_CANCEL_RATIO_DEFAULT;
  need(typeof ratio === 'number' && ratio > 0 && ratio <= 1, null, 'credit.auto_cancel_ratio_default must be in (0, 1]');
  const forced = section(r, 'force_inclusion');
  const hold_ms = forced.hold_ms === undefined ? 0 : int(forced.hold_ms, 'force_inclusion.hold_ms');
  need(hold_ms >= 0 && hold_ms < FORCE_INCLUSION_DEADLINE_MS, null, 'force_inclusion.hold_ms must be 0 or more and below 86400000 (24 hours, the inclusion deadline)');
  const snapshots = section(r, 'snapshots');
  const every_batches = snapshots.every_batches ?? 100_000;
  need(typeof every_batches === 'number' && Number.isSafeInteger(every_batches) && every_batches >= 0, null, 'snapshots.every_batches must be an integer >= 0 (0: on demand only)');
  const keep = posInt(snapshots.keep ?? 3, 'snapshots.keep');
  const journal = section(r, 'journal');
  const trim = journal.trim ?? false;
  need(typeof trim === 'boolean', null, 'journal.trim must be true or false');
  const matcher = section(r, 'matcher');
  const cpu = matcherCpu(matcher.cpu);
  const threads = section(r, 'threads');
  const background = threadPriority(threads.background, 'threads.background', THREAD_BACKGROUND_DEFAULT);
  const verify = section(r, 'verify');
  const task_items_max = intIn(verify.task_items_max === undefined ? TASK_SIZE_DEFAULT : verify.task_items_max, 1, TASK_SIZE_MAX, 'verify.task_items_max');
  const steal_after_us = intIn(verify.steal_after_us === undefined ? STEAL_AFTER_US_DEFAULT : verify.steal_after_us, 0, STEAL_AFTER_US_MAX, 'verify.steal_after_us',
    ' (0: the front never checks a waiting task itself)');
  const inline_items_max = intIn(verify.inline_items_max === undefined ? INLINE_ITEMS_DEFAULT : verify.inline_items_max, 0, INLINE_ITEMS_MAX, 'verify.inline_items_max',
    ' (0: every signature check goes to a verify worker)');
  const inline_busy_max_pct = intIn(verify.inline_busy_max_pct === undefined ? INLINE_BUSY_MAX_PCT_DEFAULT : verify.inline_busy_max_pct, 0, 100, 'verify.inline_busy_max_pct',
    ' (0: the front checks signatures itself at light load only)');
  const front = section(r, 'front');
  const answer_spin_us = intIn(front.answer_spin_us === undefined ? 0 : front.answer_spin_us, 0, ANSWER_SPIN_US_MAX, 'front.answer_spin_us',
    ' (0: the front sleeps at once while it waits for a commit)');
  const diagnostics = section(r, 'diagnostics');
  const stage_timings = diagnostics.stage_timings ?? false;
  need(typeof stage_timings === 'boolean', null, 'diagnostics.stage_timings must be true or false');
  const port = int(server.port, 'server.port');
  need(port >= 0 && port <= 65535, null, 'server.port must be 0..65535');
  const metrics = section(r, 'metrics');
  const metrics_enabled = metrics.enabled ?? true;
  need(typeof metrics_enabled === 'boolean', null, 'metrics.enabled must be true or false');
  const metrics_port = int(metrics.port ?? METRICS_PORT_DEFAULT, 'metrics.port');
  need(metrics_port >= 0 && metrics_port <= 65535, null, 'metrics.port must be 0..65535');
  const log = section(r, 'log');
  const log_level = parseLogLevel(log.level ?? 'info');
  need(log_level !== null, null, `log.level must be one of ${LOG_LEVELS.join(', ')}`);
  const log_pretty = log.pretty ?? false;
  need(typeof log_pretty === 'boolean', null, 'log.pretty must be true or false');
  const health_port = server.health_port === undefined || server.health_port === null ? null : int(server.health_port, 'server.health_port');
  need(health_port === null || (health_port >= 0 && health_port <= 65535), null, 'server.health_port must be null or 0..65535');
  return {
    server: {
      host: str(server.host, 'server.host', HOST_PATTERN),
      port,
      data_dir: need(typeof server.data_dir === 'string' && server.data_dir !== '', server.data_dir as string, 'server.data_dir must be a path'),
      health_port,
    },
    assets,
    markets,
    fees: { maker_fee_bps: maker, taker_fee_bps: taker },
    rate_limits: {
      orders_per_wallet: posInt(rl.orders_per_wallet, 'rate_limits.orders_per_wallet'),
      cancels_per_wallet: posInt(rl.cancels_per_wallet, 'rate_limits.cancels_per_wallet'),
      deposits_per_wallet: posInt(rl.deposits_per_wallet, 'rate_limits.deposits_per_wallet'),
      withdrawals_per_wallet: posInt(rl.withdrawals_per_wallet, 'rate_limits.withdrawals_per_wallet'),
      gets_per_ip: posInt(rl.gets_per_ip, 'rate_limits.gets_per_ip'),
    },
    limits,
    deposits: { open: deposits.open === true },
    web: { enabled: web.enabled === true },
    settlement: {
      contract: str(settlement.contract, 'settlement.contract', ADDRESS_PATTERN).toLowerCase(),
      chain_id: posInt(settlement.chain_id, 'settlement.chain_id'),
      rpc_url: settlement.rpc_url === undefined || settlement.rpc_url === null ? null : str(settlement.rpc_url, 'settlement.rpc_url', /^https?:\/\/\S+$/),
      poll_ms: posInt(settlement.poll_ms ?? 1000, 'settlement.poll_ms'),
      start_block: need(Number.isSafeInteger(settlement.start_block ?? 0) && (settlement.start_block ?? 0) as number >= 0,
        (settlement.start_block ?? 0) as number, 'settlement.start_block must be an integer >= 0'),
      logs_blocks_max: posInt(settlement.logs_blocks_max ?? 1000, 'settlement.logs_blocks_max'),
      roots_per_tx_max: posInt(settlement.roots_per_tx_max ?? 64, 'settlement.roots_per_tx_max'),
    },
    credit: { auto_cancel_ratio_default_ppm: ratioToPpm(ratio as number) },
    force_inclusion: { hold_ms },
    snapshots: { every_batches: every_batches as number, keep },
    journal: { trim: trim as boolean },
    matcher: { cpu },
    threads: { background },
    diagnostics: { stage_timings: stage_timings as boolean },
    verify: { task_items_max, steal_after_us, inline_items_max, inline_busy_max_pct },
    front: { answer_spin_us },
    metrics: {
      enabled: metrics_enabled as boolean,
      host: str(metrics.host ?? '127.0.0.1', 'metrics.host', HOST_PATTERN),
      port: metrics_port,
    },
    log: { level: log_level as LogSettings['level'], pretty: log_pretty as boolean },
    admin_token: null,
    operator_key: null,
    clock_offset_ms: 0,
  };
}

/** The matcher's view of the configuration. */
export function engineConfigOf(cfg: RingbookConfig): EngineConfig {
  const index = new Map(cfg.assets.map((a, i) => [a.symbol, i] as const));
  return {
    assets: cfg.assets.map((a) => a.symbol),
    markets: cfg.markets.map((m) => ({
      id: m.id,
      base: index.get(m.base) as number,
      quote: index.get(m.quote) as number,
      tick_size_units: m.tick_size,
      lot_size_units: m.lot_size,
    })),
    maker_fee_bps: cfg.fees.maker_fee_bps,
    taker_fee_bps: cfg.fees.taker_fee_bps,
    limits: {
      accounts_max: cfg.limits.accounts_max,
      markets_max: cfg.limits.markets_max,
      orders_open_max: cfg.limits.orders_open_max,
      orders_open_per_account_max: cfg.limits.orders_open_per_account_max,
      price_levels_per_book_max: cfg.limits.price_levels_per_book_max,
      inbox_entries_max: cfg.limits.inbox_entries_max,
      inbox_entries_per_account_max: cfg.limits.inbox_entries_per_account_max,
    },
    force_inclusion_hold_ms: cfg.force_inclusion.hold_ms,
  };
}
