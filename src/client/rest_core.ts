// What every call of RingbookClient (rest.ts) goes through: its options, the transport (http.ts:
// envelopes, typed errors), the nonce retry of signed requests and the wallet they need. One class
// in three files: RingbookClientCore (here), RingbookClientProgrammes (rest_programmes.ts: the
// referral programme, forced inclusion, data availability) extending it, and RingbookClient
// (rest.ts: public and account reads, signed trading, admin), the one a user makes. What the parts
// share are module functions taking the client (withNonce, signerOf, accountAddress,
// hasAdminToken), not members: a user's subclass of RingbookClient may give its own members any
// of these names without changing the SDK's calls (until 2026-11-27 they were protected members,
// which such a subclass overrode or could not compile against). The transport is #private here;
// these functions are not exported by the package entry (index.ts).
import { DuplicateNonceError } from './errors.js';
import { HttpTransport, type FetchLike } from './http.js';
import { MonotonicNonce, type NonceSource } from './nonce.js';
import type { Agent, Wallet } from './wallet.js';

export interface RingbookClientOptions {
  /** `http://host:port` (a trailing slash is removed). */
  base_url: string;
  /**
   * Needed for signed requests (orders, cancels, amends, cancel-all, withdrawals, referral
   * registration, force-include, agent approvals). An `Agent` trades for its user: orders, cancels,
   * amends, cancel-all, cancel-after and batches only.
   */
  wallet?: Wallet | Agent;
  /** `X-Admin-Token` for admin routes and `/deposit`. */
  admin_token?: string;
  /** Default: the global fetch (Node 20, browsers). */
  fetch?: FetchLike;
  /** Default: a MonotonicNonce (microsecond clock, strictly increasing). */
  nonces?: NonceSource;
  /**
   * Force-include envelope nonces: their own sequence per account, apart from the trading nonces
   * (DECISIONS, "Forced inclusion"). Default: a MonotonicNonce.
   */
  envelope_nonces?: NonceSource;
  /** Re-sends with a fresh nonce after DUPLICATE_NONCE on an automatic nonce (default 5). */
  duplicate_nonce_retries?: number;
}

/** The client's transport, for hasAdminToken (set by RingbookClientCore's static block: an #name is read in its class only). */
let transportOf: (c: RingbookClientCore) => HttpTransport;

export abstract class RingbookClientCore {
  readonly base_url: string;
  readonly wallet: Wallet | Agent | undefined;
  readonly nonces: NonceSource;
  readonly envelope_nonces: NonceSource;
  readonly duplicate_nonce_retries: number;
  readonly #http: HttpTransport;

  static {
    transportOf = (c) => c.#http;
  }

  constructor(opts: RingbookClientOptions) {
    this.base_url = opts.base_url.replace(/\/+$/, '');
    this.wallet = opts.wallet;
    this.nonces = opts.nonces ?? new MonotonicNonce();
    this.envelope_nonces = opts.envelope_nonces ?? new MonotonicNonce();
    this.duplicate_nonce_retries = opts.duplicate_nonce_retries ?? 5;
    const f = opts.fetch ?? (globalThis.fetch as unknown as FetchLike | undefined);
    if (!f) throw new TypeError('RingbookClient: no fetch available; pass options.fetch');
    this.#http = new HttpTransport(this.base_url, f, opts.admin_token);
  }

  // ------------------------------------------------------------------ transport

  /** One request; resolves with `data` of a success envelope, throws a RingbookError otherwise. */
  request<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown, opts: { admin?: boolean } = {}): Promise<T> {
    return this.#http.request<T>(method, path, body, opts);
  }
}

/**
 * Runs a signed request of client `c` with a nonce from the source. Nonces are unique and
 * increasing, so a DUPLICATE_NONCE on an auto nonce means a later request overtook this one on
 * another connection (docs/api.md "Nonces"); a refused request changed nothing, so it is
 * re-signed with a fresh nonce and sent again (at most `duplicate_nonce_retries` times).
 */
export async function withNonce<T>(
  c: RingbookClientCore, explicit: number | undefined, send: (nonce: number) => Promise<T>, source: NonceSource = c.nonces,
): Promise<T> {
  if (explicit !== undefined) return send(explicit);
  for (let attempt = 0; ; attempt++) {
    try {
      return await send(source.next());
    } catch (e) {
      if (!(e instanceof DuplicateNonceError) || attempt >= c.duplicate_nonce_retries) throw e;
    }
  }
}

/** The wallet that signs `c`'s signed requests; throws when it was given none. */
export function signerOf(c: RingbookClientCore): Wallet | Agent {
  if (!c.wallet) throw new TypeError('this call needs a wallet (RingbookClient({wallet}))');
  return c.wallet;
}

/** `address`, else the address of `c`'s wallet; throws when there is neither. */
export function accountAddress(c: RingbookClientCore, address?: string): string {
  const a = address ?? c.wallet?.address;
  if (!a) throw new TypeError('pass an address or give the client a wallet');
  return a;
}

/** Whether `c` was given an `X-Admin-Token` (the operator's deposit sends it then). */
export function hasAdminToken(c: RingbookClientCore): boolean {
  return transportOf(c).has_admin_token;
}
