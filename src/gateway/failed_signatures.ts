// The per-IP budget of failed signature checks (hostile-input audit, h32t).
//
// Why: a wallet's rate limit is charged after its signature verified (the wallet is only known
// then), so a request with a bad signature cost a recovery in the verify pool (~60 us) and no
// token; one IP could keep the pool busy with garbage and starve honest market makers.
//
// Decisions:
// - Each signed request whose signature check ends in "does not recover" (INVALID_SIGNATURE after
//   verification) charges one token to its client's IP (rate_limit.ts `charge`): a token bucket of
//   `limits.failed_signatures_per_ip_burst`, refilled at `limits.failed_signatures_per_ip_per_s`.
//   A signature that is not even 65 bytes of hex is refused while parsing and costs nothing.
// - While the IP's budget is empty, every signed request from it is answered 429 (form C,
//   Retry-After) BEFORE its signature is checked: valid ones too. Which are valid cannot be known
//   without the recovery this refuses to spend, and letting a wallet that signed well before
//   through would let an attacker name that wallet on garbage. Clients sharing an IP (NAT) share
//   its fate, as they already do for `rate_limits.gets_per_ip` and `ws_connections_per_ip_max`;
//   an honest client never fails a signature, so only an IP that sends garbage is refused.
// - Requests in flight together all charge when their verdicts come, even past an empty budget
//   (the key goes into debt): the recoveries were spent, so the IP waits for every one of them at
//   the refill rate. Sending many at once buys no extra verify time.
// - The charge is taken on the verdict whether or not the client is still there (an attacker
//   closing its connections right after sending would otherwise never pay); the IP is read when
//   the request arrives.
// - Successful requests cost one Map lookup by IP (peek) and nothing else. The table holds at
//   most `limits.failed_signatures_ips_max` IPs (the least recently charged is evicted: a flood of
//   spoofed addresses cannot grow it; an evicted IP just gets a fresh budget).
// - The same code for HTTP, POST /orders/batch (the whole group is refused, and each item with a
//   failed signature charges one) and WebSocket `post` (signed_route.ts). Not covered: the forced
//   inclusion envelope (POST /force-include, its own check) and WebSocket auth (limited per
//   connection by ws_auth_failures_max).
import type { RingbookConfig } from '../config/types.js';
import type { Answer } from './envelope.js';
import { RateLimiter } from './rate_limit.js';

/** The budget's limiter from the config's limits (a burst of B refilled at R per second is B per B/R seconds). */
export function createFailedSignatureBudget(
  limits: Pick<RingbookConfig['limits'], 'failed_signatures_per_ip_per_s' | 'failed_signatures_per_ip_burst' | 'failed_signatures_ips_max'>,
  now_ms?: () => number,
): RateLimiter {
  const burst = limits.failed_signatures_per_ip_burst;
  return new RateLimiter({
    name: 'failed_signatures_per_ip',
    label: 'failed signatures per IP',
    limit_per_window: burst,
    window_ms: (burst * 1000) / limits.failed_signatures_per_ip_per_s,
    keys_max: limits.failed_signatures_ips_max,
    now_ms,
  });
}

/**
 * Answers 429 and returns true when `ip`'s failed-signature budget is empty (call before the
 * signature is checked). `ip` null: the transport knows no IP (in-process tests): never refused.
 */
export function refuseFailedSignatureIp(budget: RateLimiter, limits: RingbookConfig['limits'], answer: Answer, ip: string | null): boolean {
  if (ip === null) return false;
  const d = budget.peek(ip);
  if (d.allowed) return false;
  answer.rateLimited(d.retry_after_s, `Too many requests with failed signatures from this IP: the limit is ` +
    `${limits.failed_signatures_per_ip_burst} at once and ${limits.failed_signatures_per_ip_per_s} per second; ` +
    `signed requests from this IP are refused before their signature is checked until the budget refills.`);
  return true;
}

/** One failed signature check from `ip` (null: unknown, not counted). */
export function chargeFailedSignature(budget: RateLimiter, ip: string | null): void {
  if (ip !== null) budget.charge(ip);
}
