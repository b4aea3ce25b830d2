// The X-Admin-Token check.
//
// Decisions:
// - Both the presented and the configured token are reduced to HMAC-SHA256 digests under a key
//   drawn at process start, and the 32-byte digests are compared with crypto.timingSafeEqual. The
//   comparison therefore always runs on equal-length inputs: neither the length nor any prefix of
//   the configured token leaks through timing, and tokens of different lengths are simply
//   unequal (no early exit).
// - An empty configured token never authorizes anything (a missing config must not open the
//   admin API), and an empty or missing header never matches.
// - `AdminTokenCheck` precomputes the configured digest once; `adminTokenMatches` is the
//   one-shot form.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const HMAC_KEY = randomBytes(32);

function digest(token: string): Buffer {
  return createHmac('sha256', HMAC_KEY).update(token, 'utf8').digest();
}

/** Holds the configured token's digest; `check(header)` compares in constant time. */
export class AdminTokenCheck {
  private readonly expected: Buffer | null;

  constructor(configured_token: string) {
    this.expected = configured_token.length === 0 ? null : digest(configured_token);
  }

  /** True when `presented` (the X-Admin-Token header value; uWS gives '' when absent) matches. */
  check(presented: string | undefined): boolean {
    // Hash even when we will refuse anyway, so a missing header costs the same as a wrong one.
    const got = digest(presented ?? '');
    if (this.expected === null || presented === undefined || presented.length === 0) return false;
    return timingSafeEqual(got, this.expected);
  }
}

/** One-shot constant-time comparison of a presented token with the configured one. */
export function adminTokenMatches(presented: string | undefined, configured_token: string): boolean {
  return new AdminTokenCheck(configured_token).check(presented);
}

/** The header uWS route handlers read: `req.getHeader(ADMIN_TOKEN_HEADER)`. */
export const ADMIN_TOKEN_HEADER = 'x-admin-token';
