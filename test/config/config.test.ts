// Configuration is checked once at start: every bad value stops the start with a message naming
// the key, and the environment overrides what it should.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfigPath, loadConfig, mergeConfig } from '../../src/config/load.js';
import { validateConfig } from '../../src/config/read.js';
import { matcherCpu } from '../../src/config/sections.js';
import { ConfigError } from '../../src/config/checks.js';
import { INLINE_BUSY_MAX_PCT_DEFAULT, INLINE_ITEMS_DEFAULT, STEAL_AFTER_US_DEFAULT, TASK_SIZE_DEFAULT } from '../../src/auth/verify_limits.js';

const defaults = JSON.parse(fs.readFileSync(defaultConfigPath(), 'utf8')) as Record<string, unknown>;

function withOverride(over: Record<string, unknown>): unknown {
  return mergeConfig(defaults, over);
}

describe('config', () => {
  it('loads the embedded defaults: two markets, three assets, the spec rate limits', () => {
    const c = loadConfig({});
    expect(c.markets.map((m) => m.id)).toEqual(['ETH-USDC', 'BTC-USDC']);
    expect(c.assets.map((a) => a.symbol)).toEqual(['ETH', 'BTC', 'USDC']);
    expect(c.rate_limits).toEqual({ orders_per_wallet: 20, cancels_per_wallet: 20, deposits_per_wallet: 5, withdrawals_per_wallet: 5, gets_per_ip: 100 });
    expect(c.server).toMatchObject({ host: '127.0.0.1', port: 8080 });
    expect(c.snapshots).toEqual({ every_batches: 100000, keep: 3 });
    expect(c.journal).toEqual({ trim: false });
    expect(c.matcher).toEqual({ cpu: null });
    expect(c.diagnostics).toEqual({ stage_timings: false });
  });

  it('matcher.cpu: null or a CPU number below the machine\'s CPU count', () => {
    const cores = os.availableParallelism();
    expect(validateConfig(withOverride({ matcher: { cpu: 0 } })).matcher).toEqual({ cpu: 0 });
    expect(validateConfig(withOverride({ matcher: { cpu: cores - 1 } })).matcher).toEqual({ cpu: cores - 1 });
    expect(validateConfig(withOverride({ matcher: { cpu: null } })).matcher).toEqual({ cpu: null });
    expect(() => validateConfig(withOverride({ matcher: { cpu: cores } }))).toThrow(`matcher.cpu must be null or an integer CPU number in [0, ${cores - 1}]`);
    for (const bad of [-1, 1.5, '0', true, 4096]) expect(() => matcherCpu(bad, 4)).toThrow(ConfigError);
    expect(matcherCpu(3, 4)).toBe(3);
    expect(() => matcherCpu(2, 2)).toThrow('(this machine has 2 CPUs)');
    expect(matcherCpu(undefined, 2)).toBeNull();
  });

  it('web.enabled: on in the embedded defaults (make run), off when a config leaves it out, a boolean', () => {
    expect(loadConfig({}).web).toEqual({ enabled: true });
    const without = { ...defaults };
    delete without.web;
    expect(validateConfig(without).web).toEqual({ enabled: false });
    expect(validateConfig(withOverride({ web: { enabled: false } })).web).toEqual({ enabled: false });
    expect(() => validateConfig(withOverride({ web: { enabled: 'yes' } }))).toThrow('web.enabled must be true or false');
  });

  it('takes RINGBOOK_* overrides and a merged RINGBOOK_CONFIG file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-config-'));
    const file = path.join(dir, 'c.json');
    fs.writeFileSync(file, JSON.stringify({ rate_limits: { orders_per_wallet: 7 }, deposits: { open: true } }));
    const c = loadConfig({ RINGBOOK_CONFIG: file, RINGBOOK_PORT: '0', RINGBOOK_HOST: '0.0.0.0', RINGBOOK_DATA_DIR: dir, RINGBOOK_ADMIN_TOKEN: 't', RINGBOOK_OPERATOR_KEY: '11'.repeat(32) });
    expect(c.rate_limits.orders_per_wallet).toBe(7);
    expect(c.rate_limits.cancels_per_wallet).toBe(20);
    expect(c.deposits.open).toBe(true);
    expect(c.server).toEqual({ host: '0.0.0.0', port: 0, data_dir: dir, health_port: null });
    expect(c.admin_token).toBe('t');
    expect(c.operator_key).toBe('0x' + '11'.repeat(32));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    [{ markets: [{ id: 'ETH-USDC', base: 'ETH', quote: 'USDC', tick_size: 3, lot_size: 7 }] }, 'multiple of 1,000,000'],
    [{ markets: [{ id: 'ETH-DOGE', base: 'ETH', quote: 'DOGE', tick_size: 10000, lot_size: 100 }] }, 'distinct listed assets'],
    [{ markets: [{ id: 'ETH-BTC', base: 'ETH', quote: 'USDC', tick_size: 10000, lot_size: 100 }] }, 'BASE-QUOTE'],
    [{ fees: { maker_fee_bps: -6, taker_fee_bps: 5 } }, 'fees need'],
    [{ server: { health_port: 70000 } }, 'server.health_port must be null or 0..65535'],
    [{ limits: { http_body_bytes_max: 8 * 1024 * 1024 } }, 'must not exceed limits.http_body_drain_bytes_max'],
    [{ fees: { maker_fee_bps: 0, taker_fee_bps: 1.5 } }, 'taker_fee_bps must be an integer'],
    [{ rate_limits: { orders_per_wallet: 0 } }, 'orders_per_wallet must be a positive integer'],
    [{ limits: { request_ring_slots: 1000 } }, 'power of two'],
    [{ server: { port: 70000 } }, 'server.port'],
    [{ assets: [] }, 'assets must be a non-empty array'],
    [{ settlement: { contract: '0x12', chain_id: 1 } }, 'settlement.contract'],
    [{ settlement: { rpc_url: 'ftp://chain' } }, 'settlement.rpc_url'],
    [{ settlement: { rpc_url: 8545 } }, 'settlement.rpc_url'],
    [{ settlement: { poll_ms: 0 } }, 'settlement.poll_ms must be a positive integer'],
    [{ settlement: { start_block: -1 } }, 'settlement.start_block must be an integer >= 0'],
    [{ settlement: { logs_blocks_max: 1.5 } }, 'settlement.logs_blocks_max must be a positive integer'],
    [{ settlement: { roots_per_tx_max: 0 } }, 'settlement.roots_per_tx_max must be a positive integer'],
    [{ credit: { auto_cancel_ratio_default: 1.5 } }, 'auto_cancel_ratio_default'],
    [{ snapshots: { every_batches: -1 } }, 'snapshots.every_batches'],
    [{ snapshots: { keep: 0 } }, 'snapshots.keep must be a positive integer'],
    [{ journal: { trim: 'yes' } }, 'journal.trim'],
    [{ diagnostics: { stage_timings: 1 } }, 'diagnostics.stage_timings must be true or false'],
    [{ verify: { task_items_max: 0 } }, 'verify.task_items_max must be an integer in 1..10000'],
    [{ verify: { task_items_max: 10_001 } }, 'verify.task_items_max must be an integer in 1..10000'],
    [{ verify: { task_items_max: '32' } }, 'verify.task_items_max'],
    [{ verify: { steal_after_us: -1 } }, 'verify.steal_after_us must be an integer in 0..1000000'],
    [{ verify: { steal_after_us: 2.5 } }, 'verify.steal_after_us must be an integer'],
    [{ front: { answer_spin_us: -1 } }, 'front.answer_spin_us must be an integer in 0..10000'],
    [{ front: { answer_spin_us: 10_001 } }, 'front.answer_spin_us must be an integer in 0..10000'],
    [{ front: { answer_spin_us: '500' } }, 'front.answer_spin_us'],
    [{ verify: { steal_after_us: 1_000_001 } }, 'verify.steal_after_us'],
    [{ verify: { steal_after_us: null } }, 'verify.steal_after_us'],
    [{ verify: { inline_items_max: -1 } }, 'verify.inline_items_max must be an integer in 0..8 (0: every signature check goes to a verify worker)'],
    [{ verify: { inline_items_max: 9 } }, 'verify.inline_items_max must be an integer in 0..8'],
    [{ verify: { inline_items_max: 1.5 } }, 'verify.inline_items_max must be an integer'],
    [{ verify: { inline_items_max: '2' } }, 'verify.inline_items_max'],
    [{ verify: { inline_busy_max_pct: -1 } }, 'verify.inline_busy_max_pct must be an integer in 0..100 (0: the front checks signatures itself at light load only)'],
    [{ verify: { inline_busy_max_pct: 101 } }, 'verify.inline_busy_max_pct must be an integer in 0..100'],
    [{ verify: { inline_busy_max_pct: 12.5 } }, 'verify.inline_busy_max_pct must be an integer'],
    [{ verify: { inline_busy_max_pct: '50' } }, 'verify.inline_busy_max_pct'],
    [{ force_inclusion: { hold_ms: -1 } }, 'force_inclusion.hold_ms'],
    [{ force_inclusion: { hold_ms: 86_400_000 } }, 'force_inclusion.hold_ms'],
    [{ force_inclusion: { hold_ms: 1.5 } }, 'force_inclusion.hold_ms must be an integer'],
    [{ force_inclusion: { hold_ms: '1h' } }, 'force_inclusion.hold_ms must be an integer'],
    [{ limits: { inbox_entries_max: 0 } }, 'limits.inbox_entries_max must be a positive integer'],
    [{ limits: { inbox_entries_per_account_max: -2 } }, 'limits.inbox_entries_per_account_max'],
    [{ limits: { closed_orders_kept: 0 } }, 'limits.closed_orders_kept must be a positive integer'],
    [{ limits: { leaderboard_trades_max: 2.5 } }, 'limits.leaderboard_trades_max must be a positive integer'],
    [{ limits: { da_backlog_batches_max: 0 } }, 'limits.da_backlog_batches_max must be a positive integer'],
    // Limits that bound each other.
    [{ limits: { request_ring_slots: 1 << 21 } }, 'the ring\'s bounds'],
    [{ limits: { event_ring_slots: 1 } }, 'the ring\'s bounds'],
    [{ limits: { request_ring_slots: 1024, batch_requests_max: 2048 } }, 'batch_requests_max (2048) must not exceed limits.request_ring_slots (1024)'],
    [{ limits: { book_depth_max: 2000, ws_book_depth_max: 1000 } }, 'book_depth_max (2000) must not exceed limits.ws_book_depth_max'],
    [{ limits: { inbox_entries_max: 8, inbox_entries_per_account_max: 16 } }, 'inbox_entries_per_account_max (16) must not exceed'],
    [{ limits: { orders_open_max: 100, orders_open_per_account_max: 1000 } }, 'orders_open_per_account_max (1000) must not exceed'],
  ])('refuses %j', (over, message) => {
    expect(() => validateConfig(withOverride(over))).toThrow(ConfigError);
    expect(() => validateConfig(withOverride(over))).toThrow(message);
  });

  // An optional section that is not an object used to run silently on its defaults.
  const OPTIONAL_SECTIONS = ['limits', 'deposits', 'web', 'credit', 'force_inclusion', 'snapshots', 'journal', 'matcher', 'threads', 'verify', 'diagnostics', 'metrics', 'log'];
  it.each(OPTIONAL_SECTIONS.flatMap((key) => [3, 'on', null, true, [1]].map((v) => [key, v] as const)))('refuses section %s: %j', (key, v) => {
    expect(() => validateConfig(withOverride({ [key]: v }))).toThrow(new ConfigError(`config: ${key} must be an object`));
  });

  it('an optional section left out is its defaults; deposits.open is a boolean', () => {
    const c = loadConfig({});
    const bare = { ...defaults };
    for (const key of OPTIONAL_SECTIONS) delete bare[key];
    const v = validateConfig(bare);
    expect(v.verify).toEqual(c.verify);
    expect(v.threads).toEqual(c.threads);
    expect(v.limits).toEqual(c.limits);
    expect(v.deposits.open).toBe(false);
    expect(validateConfig(withOverride({ deposits: { open: true } })).deposits.open).toBe(true);
    expect(() => validateConfig(withOverride({ deposits: { open: 'yes' } }))).toThrow('deposits.open must be true or false');
  });

  it('takes the front\'s answer spin from config, off (0) by default', () => {
    expect(loadConfig({}).front).toEqual({ answer_spin_us: 0 });
    expect(validateConfig(withOverride({ front: { answer_spin_us: 800 } })).front).toEqual({ answer_spin_us: 800 });
  });

  it('takes the verify pool\'s task size, steal limit and inline budget from config, 0 turning stealing or inline checks off', () => {
    const c = loadConfig({});
    const inline_busy_max_pct = INLINE_BUSY_MAX_PCT_DEFAULT;
    expect(c.verify).toEqual({ task_items_max: TASK_SIZE_DEFAULT, steal_after_us: STEAL_AFTER_US_DEFAULT, inline_items_max: INLINE_ITEMS_DEFAULT, inline_busy_max_pct });
    expect(validateConfig(withOverride({ verify: { task_items_max: 1, steal_after_us: 0, inline_items_max: 0, inline_busy_max_pct: 0 } })).verify)
      .toEqual({ task_items_max: 1, steal_after_us: 0, inline_items_max: 0, inline_busy_max_pct: 0 });
    expect(validateConfig(withOverride({ verify: { steal_after_us: 250 } })).verify)
      .toEqual({ task_items_max: TASK_SIZE_DEFAULT, steal_after_us: 250, inline_items_max: INLINE_ITEMS_DEFAULT, inline_busy_max_pct });
    expect(validateConfig(withOverride({ verify: { inline_items_max: 8 } })).verify.inline_items_max).toBe(8);
    expect(validateConfig(withOverride({ verify: { inline_busy_max_pct: 100 } })).verify.inline_busy_max_pct).toBe(100);
  });

  it('takes the limit defaults from one place and the ratio default in parts per million', () => {
    const c = loadConfig({});
    expect(c.limits.inbox_entries_max).toBe(10_000);
    expect(c.limits.batch_requests_max).toBeLessThanOrEqual(c.limits.request_ring_slots);
    expect(c.credit.auto_cancel_ratio_default_ppm).toBe(900_000);
    expect(validateConfig(withOverride({ credit: { auto_cancel_ratio_default: 0.95 } })).credit.auto_cancel_ratio_default_ppm).toBe(950_000);
    expect(validateConfig(withOverride({ limits: { request_ring_slots: 4096, batch_requests_max: 4096 } })).limits.batch_requests_max).toBe(4096);
  });

  it('refuses bad environment values', () => {
    expect(() => loadConfig({ RINGBOOK_PORT: 'eighty' })).toThrow('RINGBOOK_PORT');
    // With a port (the listen call refused it, a stack on stderr, before 2026-11-29).
    for (const bad of ['not a host', '127.0.0.1/8', 'host;rm', '127.0.0.1:9000', 'localhost:8080']) expect(() => loadConfig({ RINGBOOK_HOST: bad })).toThrow('RINGBOOK_HOST must be an IP address or a host name');
    expect(loadConfig({ RINGBOOK_HOST: '::1' }).server.host).toBe('::1');
    for (const good of ['0.0.0.0', 'localhost', 'fe80::1', '[::1]', '::ffff:127.0.0.1']) expect(loadConfig({ RINGBOOK_HOST: good }).server.host).toBe(good);
    expect(() => loadConfig({ RINGBOOK_OPERATOR_KEY: '0x1234' })).toThrow('RINGBOOK_OPERATOR_KEY');
    expect(() => loadConfig({ RINGBOOK_CONFIG: '/nonexistent/ringbook.json' })).toThrow('cannot read config');
    for (const bad of ['abc', '1.5', '1e3', '99999999999999999999']) {
      expect(() => loadConfig({ RINGBOOK_CLOCK_OFFSET_MS: bad })).toThrow('RINGBOOK_CLOCK_OFFSET_MS');
    }
    expect(loadConfig({ RINGBOOK_CLOCK_OFFSET_MS: '-3600000' }).clock_offset_ms).toBe(-3_600_000);
    expect(loadConfig({}).clock_offset_ms).toBe(0);
  });

  it('metrics: on at 127.0.0.1:9464 by default, an off switch, ports checked', () => {
    expect(loadConfig({}).metrics).toEqual({ enabled: true, host: '127.0.0.1', port: 9464 });
    expect(validateConfig(withOverride({ metrics: { enabled: false } })).metrics.enabled).toBe(false);
    expect(validateConfig(withOverride({ metrics: { port: 0 } })).metrics.port).toBe(0);
    expect(() => validateConfig(withOverride({ metrics: { enabled: 'yes' } }))).toThrow('metrics.enabled must be true or false');
    expect(() => validateConfig(withOverride({ metrics: { port: 70000 } }))).toThrow('metrics.port must be 0..65535');
    expect(() => validateConfig(withOverride({ metrics: { host: 'a b' } }))).toThrow('metrics.host');
  });

  it('log: level and pretty from config, RINGBOOK_LOG_LEVEL and RINGBOOK_LOG_PRETTY over them', () => {
    expect(loadConfig({}).log).toEqual({ level: 'info', pretty: false });
    expect(validateConfig(withOverride({ log: { level: 'debug', pretty: true } })).log).toEqual({ level: 'debug', pretty: true });
    expect(() => validateConfig(withOverride({ log: { level: 'verbose' } }))).toThrow('log.level must be one of fatal, error, warn, info, debug, trace, silent');
    expect(() => validateConfig(withOverride({ log: { pretty: 1 } }))).toThrow('log.pretty must be true or false');
    expect(loadConfig({ RINGBOOK_LOG_LEVEL: 'warn', RINGBOOK_LOG_PRETTY: '1' }).log).toEqual({ level: 'warn', pretty: true });
    expect(() => loadConfig({ RINGBOOK_LOG_LEVEL: 'loud' })).toThrow('RINGBOOK_LOG_LEVEL');
    // 0 turns off a config's pretty lines; any other value (true, yes) is refused, not ignored.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-cfg-'));
    const pretty_file = path.join(dir, 'c.json');
    fs.writeFileSync(pretty_file, JSON.stringify({ log: { pretty: true } }));
    expect(loadConfig({ RINGBOOK_CONFIG: pretty_file }).log.pretty).toBe(true);
    expect(loadConfig({ RINGBOOK_CONFIG: pretty_file, RINGBOOK_LOG_PRETTY: '0' }).log.pretty).toBe(false);
    fs.rmSync(dir, { recursive: true, force: true });
    for (const bad of ['true', 'yes', '2']) expect(() => loadConfig({ RINGBOOK_LOG_PRETTY: bad })).toThrow('RINGBOOK_LOG_PRETTY must be 1 (pretty lines) or 0 (JSON lines)');
  });

  it('RINGBOOK_RING_FUTEX: auto, native or atomics; a misspelt value stops the start', () => {
    for (const v of ['', 'auto', 'native', 'atomics']) expect(() => loadConfig({ RINGBOOK_RING_FUTEX: v })).not.toThrow();
    expect(() => loadConfig({ RINGBOOK_RING_FUTEX: 'atomic' })).toThrow('RINGBOOK_RING_FUTEX must be one of auto, native, atomics (or unset: auto), not "atomic"');
  });

});
