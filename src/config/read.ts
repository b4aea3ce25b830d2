// Reading the config: validateConfig checks the merged JSON (load.ts) section by section, every value
// (readConfig) and then every key (a key nobody reads is refused), and engineConfigOf gives the
// matcher its part. Everything is validated here, once, so the rest of the code can trust its
// limits (TIGER_STYLE: assert at the boundary).
import type { EngineConfig } from '../engine/api.js';
import { feesValid } from '../engine/engine_state.js';
import { FORCE_INCLUSION_DEADLINE_MS, ratioToPpm } from '../engine/rules.js';
import { RING_CAPACITY_SLOTS_MAX, RING_CAPACITY_SLOTS_MIN } from '../ring/ring_layout.js';
import { REQUEST_GROUP_MAX } from '../ring/request_records.js';
import { ADDRESS_PATTERN } from '../util/address.js';
import { isPlainObject as isObject, KeyReads, unknownKeysMessage } from '../util/config_keys.js';
import { LOG_LEVELS, parseLogLevel, type LogSettings } from '../util/log.js';
import {
  INLINE_BUSY_MAX_PCT_DEFAULT, INLINE_ITEMS_DEFAULT, INLINE_ITEMS_MAX, STEAL_AFTER_US_DEFAULT, STEAL_AFTER_US_MAX, TASK_SIZE_DEFAULT, TASK_SIZE_MAX,
} from '../auth/verify_limits.js';
import { HOST_PATTERN, int, intIn, need, posInt, section, str, SYMBOL } from './checks.js';
import {
  ANSWER_SPIN_US_MAX, AUTO_CANCEL_RATIO_DEFAULT, checkLimitRelations, LIMIT_DEFAULTS, matcherCpu, METRICS_PORT_DEFAULT, pipelineCpu, THREAD_BACKGROUND_DEFAULT, threadPriority, threadSliceUs,
} from './sections.js';
import type { AssetSettings, MarketSettings, RingbookConfig } from './types.js';

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
  const matcher_slice_us = threadSliceUs(threads.matcher_slice_us, 'threads.matcher_slice_us');
  const pipeline_cpu = pipelineCpu(threads.pipeline_cpu, cpu);
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
    threads: { background, matcher_slice_us, pipeline_cpu },
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
