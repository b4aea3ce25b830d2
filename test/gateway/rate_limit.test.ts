// The GCRA limiter on an injected clock: burst, refill, Retry-After, bounded memory, and its
// decisions against a plain token-bucket model on generated traffic.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRateLimiters, ipKeyFromBytes, RateLimiter } from '../../src/gateway/rate_limit.js';
import { createFailedSignatureBudget } from '../../src/gateway/failed_signatures.js';

function limiterAt(limit: number, window_ms: number, keys_max = 1000) {
  const clock = { now: 0 };
  const limiter = new RateLimiter({ limit_per_window: limit, window_ms, keys_max, now_ms: () => clock.now });
  return { clock, limiter };
}

describe('RateLimiter', () => {
  it('allows a burst of N, then one per W/N, with Retry-After the time to the next token', () => {
    const { clock, limiter } = limiterAt(20, 60_000);
    for (let i = 0; i < 20; i++) expect(limiter.take('0xa')).toEqual({ allowed: true, retry_after_s: 0 });
    expect(limiter.take('0xa')).toEqual({ allowed: false, retry_after_s: 3 });
    expect(limiter.take('0xb').allowed).toBe(true); // keys are independent
    clock.now = 1_500;
    expect(limiter.take('0xa')).toEqual({ allowed: false, retry_after_s: 2 });
    clock.now = 2_001;
    expect(limiter.take('0xa')).toEqual({ allowed: false, retry_after_s: 1 });
    clock.now = 2_999;
    expect(limiter.take('0xa')).toEqual({ allowed: false, retry_after_s: 1 }); // at least 1
    clock.now = 3_000;
    expect(limiter.take('0xa').allowed).toBe(true);
    expect(limiter.take('0xa').allowed).toBe(false);
    // A full quiet window refills the whole bucket.
    clock.now = 3_000 + 60_000;
    for (let i = 0; i < 20; i++) expect(limiter.take('0xa').allowed).toBe(true);
    expect(limiter.take('0xa').allowed).toBe(false);
  });

  it('denied requests do not consume tokens', () => {
    const { clock, limiter } = limiterAt(2, 10_000);
    limiter.take('k');
    limiter.take('k');
    for (let i = 0; i < 100; i++) expect(limiter.take('k').allowed).toBe(false);
    clock.now = 5_000;
    expect(limiter.take('k').allowed).toBe(true);
  });

  it('rounds Retry-After up to whole seconds with intervals that are not whole', () => {
    const { clock, limiter } = limiterAt(7, 60_000); // one token every 8571.43 ms
    for (let i = 0; i < 7; i++) expect(limiter.take('k').allowed).toBe(true);
    expect(limiter.take('k').retry_after_s).toBe(9);
    clock.now = 8_571;
    expect(limiter.take('k')).toEqual({ allowed: false, retry_after_s: 1 });
    clock.now = 8_572;
    expect(limiter.take('k').allowed).toBe(true);
    clock.now = 60_000;
    // After a full window from the burst at 0, exactly the tokens that came back since are there.
    let allowed = 0;
    while (limiter.take('k').allowed) allowed++;
    expect(allowed).toBe(6);
  });

  it('a limit of 1 per window', () => {
    const { clock, limiter } = limiterAt(1, 60_000);
    expect(limiter.take('k').allowed).toBe(true);
    expect(limiter.take('k')).toEqual({ allowed: false, retry_after_s: 60 });
    clock.now = 59_999;
    expect(limiter.take('k')).toEqual({ allowed: false, retry_after_s: 1 });
    clock.now = 60_000;
    expect(limiter.take('k').allowed).toBe(true);
  });

  it('refuses nonsense options', () => {
    const base = { limit_per_window: 1, window_ms: 1000, keys_max: 1 };
    expect(() => new RateLimiter({ ...base, limit_per_window: 0 })).toThrow(RangeError);
    expect(() => new RateLimiter({ ...base, limit_per_window: 1.5 })).toThrow(RangeError);
    expect(() => new RateLimiter({ ...base, window_ms: 0 })).toThrow(RangeError);
    expect(() => new RateLimiter({ ...base, window_ms: NaN })).toThrow(RangeError);
    expect(() => new RateLimiter({ ...base, keys_max: 0 })).toThrow(RangeError);
  });

  it('never holds more than keys_max keys, evicting the least recently allowed', () => {
    const { clock, limiter } = limiterAt(5, 60_000, 100);
    let max_size = 0;
    let denied = 0;
    for (let i = 0; i < 10_000; i++) {
      clock.now = i; // every key still live: nothing expires within the test
      if (!limiter.take(`key${i}`).allowed) denied++;
      max_size = Math.max(max_size, limiter.size);
    }
    expect(denied).toBe(0);
    expect(max_size).toBe(100);
    expect(limiter.size).toBe(100);
    expect(limiter.evicted_live).toBe(9_900);
    // The most recent keys are the ones kept: key9999 used its token.
    for (let i = 0; i < 4; i++) expect(limiter.take('key9999').allowed).toBe(true);
    expect(limiter.take('key9999').allowed).toBe(false);
  });

  it('counts an eviction as live only when the evicted key was still live (between sweeps the front may have expired)', () => {
    // 100 keys (> the sweep-on-every-take size) fill the Map; the 100 takes leave the periodic
    // sweep 36 takes in, so the next takes evict from the front without a sweep first.
    const { clock, limiter } = limiterAt(1, 1000, 100);
    for (let i = 0; i < 100; i++) expect(limiter.take(`key${i}`).allowed).toBe(true);
    expect(limiter.size).toBe(100);
    // Still live (key0's next token is 1000 ms away): evicting it takes a live bucket.
    clock.now = 500;
    expect(limiter.take('fresh0').allowed).toBe(true);
    expect(limiter.size).toBe(100);
    expect(limiter.evicted_live).toBe(1);
    // Every old key's bucket is full again; no sweep has run since: the front key is evicted, not counted.
    clock.now = 5_000;
    for (let i = 1; i <= 5; i++) expect(limiter.take(`fresh${i}`).allowed).toBe(true);
    expect(limiter.size).toBe(100);
    expect(limiter.evicted_live).toBe(1);
  });

  it('drops expired keys as time passes, so idle clients cost nothing', () => {
    const { clock, limiter } = limiterAt(20, 60_000, 100_000);
    for (let i = 0; i < 1000; i++) limiter.take(`old${i}`);
    expect(limiter.size).toBe(1000);
    clock.now = 60_000; // every old key's bucket is full again
    for (let i = 0; i < 300; i++) limiter.take(`new${i}`);
    expect(limiter.size).toBeLessThan(1000);
    for (let i = 300; i < 600; i++) limiter.take(`new${i}`);
    expect(limiter.size).toBe(600);
    expect(limiter.evicted_live).toBe(0);
  });

  it('matches a token-bucket model on generated traffic, and never exceeds 2N - 1 per window', () => {
    const N = 5;
    const W = 10_000;
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 40 })), { maxLength: 300 }),
        (steps) => {
          const { clock, limiter } = limiterAt(N, W);
          // Model: per key, credit in ms capped at W; a request costs W/N ms of credit.
          const credit = new Map<number, { ms: number; at: number }>();
          const allowed_at = new Map<number, number[]>();
          for (const [key, step] of steps) {
            clock.now += step * 250; // W/N = 2000 ms: multiples of 250 ms keep the model exact
            const state = credit.get(key) ?? { ms: W, at: clock.now };
            state.ms = Math.min(W, state.ms + (clock.now - state.at));
            state.at = clock.now;
            const model_allowed = state.ms >= W / N;
            if (model_allowed) state.ms -= W / N;
            credit.set(key, state);
            const got = limiter.take(`k${key}`);
            expect(got.allowed).toBe(model_allowed);
            if (!got.allowed) {
              expect(got.retry_after_s).toBe(Math.max(1, Math.ceil((W / N - state.ms) / 1000)));
            } else {
              const times = allowed_at.get(key) ?? [];
              times.push(clock.now);
              allowed_at.set(key, times);
              expect(times.filter((t) => t > clock.now - W).length).toBeLessThanOrEqual(2 * N - 1);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('writes the form C sentence', () => {
    const { limiter } = limiterAt(20, 60_000);
    expect(limiter.sentence(3)).toBe('Too many requests: at most 20 per minute. Retry after 3 seconds.');
    expect(limiter.sentence(0.2)).toBe('Too many requests: at most 20 per minute. Retry after 1 second.');
  });
});

describe('createRateLimiters', () => {
  it('builds one per-minute limiter per config entry', () => {
    let now = 0;
    const limits = createRateLimiters(
      { orders_per_wallet: 20, cancels_per_wallet: 20, deposits_per_wallet: 5, withdrawals_per_wallet: 5, gets_per_ip: 100 },
      { keys_max: 1000, now_ms: () => now },
    );
    expect(limits.deposits_per_wallet.limit_per_window).toBe(5);
    expect(limits.gets_per_ip.window_ms).toBe(60_000);
    for (let i = 0; i < 5; i++) expect(limits.deposits_per_wallet.take('0xa').allowed).toBe(true);
    const denied = limits.deposits_per_wallet.take('0xa');
    expect(denied).toEqual({ allowed: false, retry_after_s: 12 });
    expect(limits.deposits_per_wallet.sentence(denied.retry_after_s)).toBe(
      'Too many deposits per wallet: at most 5 per minute. Retry after 12 seconds.',
    );
    expect(limits.orders_per_wallet.take('0xa').allowed).toBe(true); // separate limits
    now = 12_000;
    expect(limits.deposits_per_wallet.take('0xa').allowed).toBe(true);
  });
});

describe('ipKeyFromBytes', () => {
  it('keys IPv4 by address, IPv4-mapped IPv6 as IPv4, IPv6 by /64', () => {
    expect(ipKeyFromBytes(new Uint8Array([127, 0, 0, 1]))).toBe('127.0.0.1');
    expect(ipKeyFromBytes(new Uint8Array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3]))).toBe('10.1.2.3');
    const a = new Uint8Array([0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8]);
    const b = new Uint8Array([0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 9, 9, 9, 9, 9, 9, 9, 9]);
    expect(ipKeyFromBytes(a)).toBe('v6:20010db800010002');
    expect(ipKeyFromBytes(b)).toBe(ipKeyFromBytes(a));
  });
});

describe('RateLimiter peek and charge (the failed-signature budget)', () => {
  it('peek consumes nothing; charge counts past an empty bucket, and the debt is paid at the refill rate', () => {
    let now = 1000;
    // 2 at once, 1 per second (failed_signatures.ts's shape: burst B over B / rate seconds).
    const b = createFailedSignatureBudget({ failed_signatures_per_ip_burst: 2, failed_signatures_per_ip_per_s: 1, failed_signatures_ips_max: 10 }, () => now);
    for (let i = 0; i < 5; i++) expect(b.peek('1.2.3.4').allowed).toBe(true);
    expect(b.size).toBe(0); // peeks hold no key
    b.charge('1.2.3.4');
    expect(b.peek('1.2.3.4').allowed).toBe(true);
    b.charge('1.2.3.4');
    // Two failures: the burst is used up; the next request waits for a token.
    expect(b.peek('1.2.3.4')).toEqual({ allowed: false, retry_after_s: 1 });
    b.charge('1.2.3.4'); // a third and a fourth were in flight with them: into debt
    b.charge('1.2.3.4');
    expect(b.peek('1.2.3.4')).toEqual({ allowed: false, retry_after_s: 3 });
    expect(b.peek('5.6.7.8').allowed).toBe(true); // per IP
    now += 2000;
    expect(b.peek('1.2.3.4')).toEqual({ allowed: false, retry_after_s: 1 });
    now += 1000;
    expect(b.peek('1.2.3.4').allowed).toBe(true); // paid back: one more failure may be checked
    // What the metrics read (ringbook_failed_signatures_total): four charges, three refused peeks.
    expect({ charges: b.charges, peek_refusals: b.peek_refusals }).toEqual({ charges: 4, peek_refusals: 3 });
  });

  it('the table holds at most keys_max IPs, however many charge', () => {
    const now = 0;
    const b = new RateLimiter({ limit_per_window: 1, window_ms: 1000, keys_max: 8, now_ms: () => now });
    for (let i = 0; i < 1000; i++) b.charge(`10.0.${i >> 8}.${i & 255}`);
    expect(b.size).toBe(8);
    expect(b.peek('10.0.3.231').allowed).toBe(false); // the latest are kept (the oldest evicted)
    expect(b.peek('10.0.0.0').allowed).toBe(true);
  });
});
