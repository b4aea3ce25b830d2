// Each section's defaults and the readers of the sections that need more than one check: the named
// limits (LIMIT_DEFAULTS, checked alone by read.ts and against each other here), the matcher's CPU,
// the background threads' priority, and the bounds of the front's and the metrics' settings.
import os from 'node:os';
import { INBOX_ENTRIES_MAX_DEFAULT, INBOX_ENTRIES_PER_ACCOUNT_MAX_DEFAULT } from '../engine/api.js';
import { isPlainObject as isObject } from '../util/config_keys.js';
import { NICE_MAX, NICE_MIN, SCHED_POLICIES, type SchedPolicy, type ThreadPriority } from '../util/thread_priority.js';
import { SLICE_US_MAX, SLICE_US_MIN } from '../util/thread_slice.js';
import { need } from './checks.js';
import type { RingbookConfig } from './types.js';

/**
 * The leaderboard's window at most (30 days of fills otherwise): 72 bytes a fill, 144 MB when full
 * (src/marketdata/leaderboard.ts, which takes it as its default too).
 */
export const LEADERBOARD_TRADES_MAX_DEFAULT = 2_000_000;

export const LIMIT_DEFAULTS: RingbookConfig['limits'] = {
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
  // Failed signature checks per IP (each one cost the verify pool ~60 us of recovery): an honest
  // client signs correctly and never fails one; a buggy one failing 20 a second is told 429 long
  // before it matters. 20/s is ~1.2 ms of verify per second per IP; a burst of 100 absorbs a
  // client restarting with a wrong key on many connections at once.
  failed_signatures_per_ip_per_s: 20,
  failed_signatures_per_ip_burst: 100,
  // One Map entry (~100 bytes with its key) per IP that failed recently: <= ~10 MB. A flood of
  // spoofed or rotated addresses evicts the oldest entries instead of growing the Map.
  failed_signatures_ips_max: 100_000,
};

/** credit.auto_cancel_ratio_default when the config names none (a fraction, as the config writes it). */
export const AUTO_CANCEL_RATIO_DEFAULT = 0.9;

/**
 * Limits that bound each other (each is also checked alone). A batch is drained from the request
 * ring, so it cannot hold more requests than the ring; a WebSocket book snapshot carries at least
 * the levels GET /markets/:id/book can answer, so a subscriber never sees less than a poller.
 */
export function checkLimitRelations(l: RingbookConfig['limits']): void {
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

/**
 * Longest front.answer_spin_us: 10 ms, far above a journal commit (~0.3 ms here): a spin that long
 * is a core spent per wait, not a latency setting.
 */
export const ANSWER_SPIN_US_MAX = 10_000;

/** The Prometheus exporters' customary port range starts at 9100; 9464 is the OpenTelemetry exporter's default. */
export const METRICS_PORT_DEFAULT = 9464;

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
 * `threads.pipeline_cpu`: null/absent (no placement) or the CPU the front and the matcher share,
 * every other server thread going to the other CPUs (src/util/thread_placement.ts). Needs a
 * second CPU for those, and agrees with `matcher.cpu` when both are set (the matcher cannot be
 * pinned to two CPUs).
 */
export function pipelineCpu(x: unknown, matcher_cpu: number | null, cores: number = os.availableParallelism()): number | null {
  if (x === undefined || x === null) return null;
  need(typeof x === 'number' && Number.isSafeInteger(x) && x >= 0 && x < cores, null,
    `threads.pipeline_cpu must be null or an integer CPU number in [0, ${cores - 1}] (this machine has ${cores} CPUs)`);
  need(cores >= 2, null, 'threads.pipeline_cpu needs at least 2 CPUs (the other threads go to the CPUs the front and the matcher do not use)');
  need(matcher_cpu === null || matcher_cpu === x, null,
    `threads.pipeline_cpu (${String(x)}) and matcher.cpu (${String(matcher_cpu)}) disagree: the matcher runs on the pipeline CPU; leave matcher.cpu out or set it to the same CPU`);
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
 * `threads.matcher_slice_us`: the EEVDF slice the matcher thread asks for (src/util/thread_slice.ts),
 * an integer in the kernel's range SLICE_US_MIN..SLICE_US_MAX (100 µs..100 ms; the kernel would
 * clamp anything else, and the read-back would then differ); absent or null: the kernel's default
 * slice, nothing called.
 */
export function threadSliceUs(x: unknown, key: string): number | null {
  if (x === undefined || x === null) return null;
  need(typeof x === 'number' && Number.isSafeInteger(x) && x >= SLICE_US_MIN && x <= SLICE_US_MAX, null,
    `${key} must be null (the kernel's default slice) or an integer in [${SLICE_US_MIN}, ${SLICE_US_MAX}] (µs)`);
  return x as number;
}
