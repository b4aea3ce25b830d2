// Rate limiter benchmark: the per-wallet limiter's `take` (src/gateway/rate_limit.ts), one per
// signed request on the front thread, in two regimes, medians over 5 timed runs:
//   - live: 1,000 wallets under a per-minute limit (600/min): every key stays live, each take moves
//     its key to the back of the Map (the case the periodic sweep is for);
//   - instant: the load bench's unlimited rates (1e9/min): every key expires at once, the Map stays tiny.
//
//   npx tsc -p tsconfig.json && node dist/bench/rate_limit.js [--wallets N (1000)] [--runs N (5)]
// Ends with ONE JSON line {"bench":"rate_limit","live_us_per_take":..,"instant_us_per_take":..}.
import os from 'node:os';
import { RateLimiter } from '../src/gateway/rate_limit.js';
import { Knobs } from './knobs.js';

const knobs = new Knobs();
/** Live keys: ~1,000 wallets trading at once (the load bench's count). */
const WALLETS = knobs.number('wallets', 1000, 1, 100_000);
const RUNS = knobs.number('runs', 5, 1, 99);
knobs.finish();
const WARM_TAKES = 200_000;
const TIMED_TAKES = 300_000;

function usPerTake(limit_per_minute: number): number {
  const keys = Array.from({ length: WALLETS }, (_, i) => '0x' + i.toString(16).padStart(40, '0'));
  const runs: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const limiter = new RateLimiter({ limit_per_window: limit_per_minute, window_ms: 60_000, keys_max: 100_000 });
    let k = 0;
    for (let i = 0; i < WARM_TAKES; i++) limiter.take(keys[k++ % WALLETS]);
    const t0 = performance.now();
    // A stride of 7 over 1,000 keys: every key in turn, not in insertion order.
    for (let i = 0; i < TIMED_TAKES; i++) limiter.take(keys[(k++ * 7) % WALLETS]);
    runs.push(((performance.now() - t0) * 1000) / TIMED_TAKES);
  }
  runs.sort((a, b) => a - b);
  return Math.round(runs[RUNS >> 1] * 1000) / 1000;
}

const live = usPerTake(600);
const instant = usPerTake(1_000_000_000);
console.log(`rate_limit: ${new Date().toISOString()}, ${os.cpus()[0]?.model ?? '?'}, load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
console.log(`  live keys (${WALLETS} wallets, 600/min), medians of ${RUNS} runs: ${live} us/take; keys expiring at once: ${instant} us/take`);
console.log(JSON.stringify({ bench: 'rate_limit', live_us_per_take: live, instant_us_per_take: instant }));
