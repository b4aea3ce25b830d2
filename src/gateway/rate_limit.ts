// Rate limits: a GCRA (generic cell rate algorithm, the one-number form of a token bucket) per key,
// with bounded memory.
//
// Decisions:
// - Algorithm: token bucket in its GCRA form. A limit of N per window W is a bucket of N tokens
//   refilled continuously at N per W: a quiet client may burst N requests at once, and a client
//   that used its burst gets one more request every W/N (3 s for 20 per minute). After a full
//   quiet window the bucket is full again. Why: one number per key (the "theoretical arrival
//   time"), O(1) per request, no window-boundary cliff (a fixed window allows 2N across a
//   boundary in a moment), and an exact Retry-After: the time until the next token. The price: a
//   client that bursts N and then keeps pace can make up to 2N - 1 requests in the first W (a
//   sliding log would be exact but needs N timestamps per key).
// - Retry-After is the wait until the next request would pass, rounded up to whole seconds, at
//   least 1. Denied requests do not consume anything.
// - Memory: at most `keys_max` keys. Keys live in a Map kept in the order of their last allowed
//   request; every SWEEP_EVERY_TAKES-th `take` first drops up to SWEEP_EVERY_TAKES x
//   SWEEP_PER_TAKE expired keys from the front (a key
//   whose bucket is full again is the same as no key). Because a key's bucket is full at most W
//   after its last allowed request, the expired keys always form a prefix of that order, so the
//   Map holds little more than the keys active in the last window. When a new key arrives and the
//   Map is still full, the least recently allowed key is evicted (its client gets a fresh bucket:
//   leniency under a flood of distinct keys, never unbounded growth). `evicted_live` counts them
//   (only keys still live: between sweeps the front key may have expired, and evicting it is a
//   sweep's work).
// - Keys are opaque strings; callers pass normalized ones (lowercase addresses from
//   parseAddress, `clientIpKey(res)` for IPs).
// - The clock is injected (`now_ms`), monotonic `performance.now()` by default, so tests run
//   without sleeping and wall-clock steps cannot unlock or lock anybody.
import { performance } from 'node:perf_hooks';
import type { HttpResponse } from 'uWebSockets.js';

export interface RateLimiterOptions {
  /** Name for logs and metrics, e.g. `orders_per_wallet`. */
  name?: string;
  /** What is counted, for the 429 sentence, e.g. `orders per wallet`. Defaults to `requests`. */
  label?: string;
  /** N: requests allowed per window (and the burst size). */
  limit_per_window: number;
  /** W in milliseconds. */
  window_ms: number;
  /** Most keys held at once. */
  keys_max: number;
  /** Monotonic clock in milliseconds. Default `performance.now()`. */
  now_ms?: () => number;
}

export interface RateDecision {
  readonly allowed: boolean;
  /** Whole seconds until a request with this key would pass; 0 when allowed. */
  readonly retry_after_s: number;
}

/** Every allowed take answers this one object (one take per signed request: no object each). */
const ALLOWED: RateDecision = Object.freeze({ allowed: true, retry_after_s: 0 });

/** Expired keys dropped from the front of the Map per `take`, on average (amortized O(1), bounded latency). */
const SWEEP_PER_TAKE = 4;
/**
 * The sweep runs once per this many takes (with their budgets together), or on every take while
 * the Map holds at most SWEEP_ALWAYS_KEYS_MAX keys: starting a walk of the Map from its front costs a skip
 * over every entry deleted there since V8 last compacted the table, and each take deletes one
 * (its key moves to the back). With 1,000 live keys (a per-minute limit) a sweep on every take
 * cost ~2.5-3.9 µs per take, once per 64 takes ~0.6-1.2 (2026-11-26, 2 shared cores, noisy);
 * keys that expire at once (the load bench's unlimited rates) keep the Map tiny, where a sweep
 * per take is cheapest (~0.25-0.7 µs; once per 64 takes: ~1.3-1.7).
 */
const SWEEP_EVERY_TAKES = 64;
/**
 * While the Map holds at most this many keys every take sweeps (a tiny Map: the walk from its
 * front is short, and the cheapest per take, see above). The same 64 as SWEEP_EVERY_TAKES by
 * measurement, not by necessity: one sweep per take below it, one per 64 takes above it.
 */
const SWEEP_ALWAYS_KEYS_MAX = 64;
/** Float slack for the token boundary, in ms. */
const EPSILON_MS = 1e-6;

export class RateLimiter {
  declare readonly name: string;
  declare readonly label: string;
  declare readonly limit_per_window: number;
  declare readonly window_ms: number;
  declare readonly keys_max: number;
  /** Live keys (time still ahead of now) evicted because the Map was full; expired ones are not counted. */
  evicted_live = 0;
  /** Requests `peek` refused (the failed-signature budget's refusals before a check: metrics). */
  peek_refusals = 0;
  /** Tokens `charge` counted (the failed-signature budget: signatures that failed their check). */
  charges = 0;
  private declare readonly now_ms: () => number;
  /** W / N: the time one token takes to come back. */
  private declare readonly interval_ms: number;
  /** W - W / N: how far ahead of now the theoretical arrival time may be and still pass. */
  private declare readonly tolerance_ms: number;
  /** key -> theoretical arrival time (ms), in order of the last allowed request. */
  private readonly tat = new Map<string, number>();
  /** Takes since the last sweep. */
  private takes_since_sweep = 0;

  constructor(options: RateLimiterOptions) {
    const { limit_per_window, window_ms, keys_max } = options;
    if (!Number.isSafeInteger(limit_per_window) || limit_per_window < 1) {
      throw new RangeError(`limit_per_window must be a positive integer, got ${limit_per_window}`);
    }
    if (!Number.isFinite(window_ms) || window_ms <= 0) {
      throw new RangeError(`window_ms must be positive, got ${window_ms}`);
    }
    if (!Number.isSafeInteger(keys_max) || keys_max < 1) {
      throw new RangeError(`keys_max must be a positive integer, got ${keys_max}`);
    }
    this.name = options.name ?? 'rate_limit';
    this.label = options.label ?? 'requests';
    this.limit_per_window = limit_per_window;
    this.window_ms = window_ms;
    this.keys_max = keys_max;
    // perf_hooks' performance (imported): the global one is an accessor run on every read.
    this.now_ms = options.now_ms ?? (() => performance.now());
    this.interval_ms = window_ms / limit_per_window;
    this.tolerance_ms = window_ms - this.interval_ms;
  }

  /** Counts one request for `key` if it is allowed. */
  take(key: string): RateDecision {
    const now = this.now_ms();
    this.sweepWhenDue(now);
    const stored = this.tat.get(key);
    const tat = stored === undefined || stored < now ? now : stored;
    const ahead = tat - now;
    if (ahead > this.tolerance_ms + EPSILON_MS) return this.refusal(ahead);
    this.advance(key, stored, tat, now);
    return ALLOWED;
  }

  /** Sweeps expired keys every SWEEP_EVERY_TAKES counts (at every one while the table is small). */
  private sweepWhenDue(now: number): void {
    if (++this.takes_since_sweep >= SWEEP_EVERY_TAKES || this.tat.size <= SWEEP_ALWAYS_KEYS_MAX) {
      this.takes_since_sweep = 0;
      this.sweep(now);
    }
  }

  /** A refusal for a key whose theoretical arrival time is `ahead` ms past now. */
  private refusal(ahead: number): RateDecision {
    const wait_ms = ahead - this.tolerance_ms;
    return { allowed: false, retry_after_s: Math.max(1, Math.ceil(wait_ms / 1000 - EPSILON_MS / 1000)) };
  }

  /** Moves `key` (held as `stored`) one interval past `tat`, to the Map's end (the newest). */
  private advance(key: string, stored: number | undefined, tat: number, now: number): void {
    const map = this.tat;
    if (stored !== undefined) {
      map.delete(key);
    } else if (map.size >= this.keys_max) {
      // Between sweeps the front key may have expired already (its bucket full again): dropping
      // it costs its client nothing, so only a key whose time is still ahead counts as live.
      this.evictOldest(now);
    }
    map.set(key, tat + this.interval_ms);
  }

  private evictOldest(now: number): void {
    const oldest = this.tat.entries().next();
    if (!oldest.done) {
      const [oldest_key, oldest_tat] = oldest.value;
      this.tat.delete(oldest_key);
      if (oldest_tat > now) this.evicted_live++;
    }
  }

  /**
   * Whether a request with `key` would be refused now, consuming nothing: one Map lookup (and no
   * clock read) for a key the limiter does not hold. Pairs with `charge` for a limit on what
   * happens to a request, learnt after it was let in (failed signatures, failed_signatures.ts).
   */
  peek(key: string): RateDecision {
    const stored = this.tat.get(key);
    if (stored === undefined) return ALLOWED;
    const ahead = stored - this.now_ms();
    if (ahead <= this.tolerance_ms + EPSILON_MS) return ALLOWED;
    this.peek_refusals++;
    return this.refusal(ahead);
  }

  /**
   * Counts one token for `key` even when its bucket is already empty: the key goes into debt, and
   * `peek` refuses it until the debt is paid back at the refill rate. For a cost that was already
   * spent when it is counted (requests let in by `peek` and in flight together all count), so a
   * client pays in waiting time for every one, however many it had in flight. A key in debt may
   * expire after keys behind it in the Map, which only makes a sweep stop early (the Map stays
   * bounded by keys_max).
   */
  charge(key: string): void {
    this.charges++;
    const now = this.now_ms();
    this.sweepWhenDue(now);
    const stored = this.tat.get(key);
    this.advance(key, stored, stored === undefined || stored < now ? now : stored, now);
  }

  /** Keys currently held. */
  get size(): number {
    return this.tat.size;
  }

  /** Forgets every key. */
  clear(): void {
    this.tat.clear();
  }

  /** The form C sentence for a denial, e.g. "Too many orders per wallet: at most 20 per minute. Retry after 3 seconds." */
  sentence(retry_after_s: number): string {
    const seconds = Math.max(1, Math.ceil(retry_after_s));
    return `Too many ${this.label}: at most ${this.limit_per_window} per ${windowText(this.window_ms)}. ` +
      `Retry after ${seconds} second${seconds === 1 ? '' : 's'}.`;
  }

  private sweep(now: number): void {
    const map = this.tat;
    let budget = SWEEP_PER_TAKE * SWEEP_EVERY_TAKES;
    for (const [key, tat] of map) {
      if (budget-- === 0 || tat > now) break;
      map.delete(key);
    }
  }
}

function windowText(window_ms: number): string {
  if (window_ms === 60_000) return 'minute';
  if (window_ms === 1000) return 'second';
  if (window_ms === 3_600_000) return 'hour';
  if (window_ms % 1000 === 0) return `${window_ms / 1000} seconds`;
  return `${window_ms} ms`;
}

/**
 * One limiter per entry of a per-minute table such as config `rate_limits`
 * (`{orders_per_wallet: 20, ...}`): name = the key, label = the key with `_` as spaces.
 */
export function createRateLimiters<K extends string>(
  per_minute: Readonly<Record<K, number>>,
  options: { keys_max: number; now_ms?: () => number },
): Record<K, RateLimiter> {
  const out = {} as Record<K, RateLimiter>;
  for (const name of Object.keys(per_minute) as K[]) {
    out[name] = new RateLimiter({
      name,
      label: name.replace(/_/g, ' '),
      limit_per_window: per_minute[name],
      window_ms: 60_000,
      keys_max: options.keys_max,
      now_ms: options.now_ms,
    });
  }
  return out;
}

/**
 * The rate-limit key of the client's IP, read from the socket (call synchronously in the route
 * handler). IPv4 (also IPv4-mapped IPv6) is the dotted quad; IPv6 is keyed by its /64 prefix
 * (`v6:<16 hex>`), because one host usually holds a whole /64 and could otherwise rotate
 * addresses to escape the limit. Proxy headers (X-Forwarded-For) are not trusted.
 */
export function clientIpKey(res: HttpResponse): string {
  return ipKeyFromBytes(new Uint8Array(res.getRemoteAddress()));
}

/** `clientIpKey` on raw address bytes (4 or 16). */
export function ipKeyFromBytes(b: Uint8Array): string {
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  if (b.length === 16) {
    let mapped = b[10] === 0xff && b[11] === 0xff;
    for (let i = 0; mapped && i < 10; i++) if (b[i] !== 0) mapped = false;
    if (mapped) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
    return `v6:${Buffer.from(b.subarray(0, 8)).toString('hex')}`;
  }
  return `raw:${Buffer.from(b).toString('hex')}`;
}
