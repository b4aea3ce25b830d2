// The programmes' calls of RingbookClient (rest.ts): the referral programme, forced inclusion
// (signed envelopes with their own nonce sequence) and data availability (batches, proofs). A part
// of the client's one class (rest_core.ts says how the three files chain); results are typed in
// programme_types.ts.
import { enc, query } from './http.js';
import {
  encodeForcedPayload, forcedEnvelope, forceIncludeBody, referralBody, referrerText, type ForcedRequest,
} from './bodies.js';
import type {
  DaBatch, DaProof, ForceInclusion, ForceInclusionStatus, ReferralRegistration, ReferralStats,
} from './programme_types.js';
import type { ForceIncludeOptions, RegisterReferralInput } from './input_types.js';
import { accountAddress, RingbookClientCore, signerOf, withNonce } from './rest_core.js';

export abstract class RingbookClientProgrammes extends RingbookClientCore {
  // ------------------------------------------------------------------ referral programme

  /**
   * Registers the client's wallet as referred by `referrer` (both must be accounts; once set, the
   * referrer never changes). Signed like every operation, with a nonce from the nonce source.
   */
  async registerReferral(r: RegisterReferralInput): Promise<ReferralRegistration> {
    const w = signerOf(this);
    referrerText(r.referrer); // a malformed referrer throws before any nonce is taken
    return withNonce(this, r.nonce, (nonce) => this.request<ReferralRegistration>('POST', '/referral/register', referralBody(w, r.referrer, nonce)));
  }

  /** Referral statistics of `address` (default: the wallet); any well-formed address answers. */
  referral(address?: string, opts: { limit?: number } = {}): Promise<ReferralStats> {
    const q = opts.limit === undefined ? '' : `?limit=${opts.limit}`;
    return this.request('GET', `/referral/${enc(accountAddress(this, address))}${q}`);
  }

  // ------------------------------------------------------------------ forced inclusion

  /**
   * Queues a request in the forced-inclusion inbox, past the sequencer. The request is signed with
   * the same builder as the direct call (placeOrder, cancel, amend, cancelAll, withdraw,
   * registerReferral) at the next trading nonce (or `payload_nonce`), written as the payload (with
   * its `kind` member), and wrapped in an envelope signed at the next envelope nonce (or `nonce`):
   * envelopes have their own nonce sequence, so the two never collide. The answer is the queued
   * entry: the request itself runs when the entry is included (see forceInclusion and
   * waitForInclusion), and its nonce is checked against the trading mark then.
   */
  async forceInclude(r: ForcedRequest, opts: ForceIncludeOptions = {}): Promise<ForceInclusion> {
    const w = signerOf(this);
    const payload_nonce = opts.payload_nonce ?? this.nonces.next();
    this.nonces.observe(payload_nonce);
    return withNonce(this, opts.nonce, (nonce) => {
      const { envelope } = forcedEnvelope(w, r, nonce, { ...opts, payload_nonce });
      return this.request<ForceInclusion>('POST', '/force-include', envelope);
    }, this.envelope_nonces);
  }

  /**
   * Queues a payload built elsewhere, typically a request already signed that the sequencer
   * ignored: a signed body (object, encoded as compact JSON; a `kind` member is kept when
   * present) or its hex, sent as is. The envelope takes the next envelope nonce (or `nonce`);
   * the payload keeps whatever nonce it was signed with.
   */
  async forceIncludePayload(payload: string | Record<string, unknown>, opts: { nonce?: number } = {}): Promise<ForceInclusion> {
    const w = signerOf(this);
    const hex = typeof payload === 'string' ? payload : encodeForcedPayload(payload, { kind: typeof payload.kind === 'string' });
    return withNonce(this, opts.nonce, (nonce) => this.request<ForceInclusion>('POST', '/force-include', forceIncludeBody(w, hex, nonce)), this.envelope_nonces);
  }

  /** An inbox entry: pending, or included with its result. */
  forceInclusion(entry_id: number | string): Promise<ForceInclusionStatus> {
    return this.request('GET', `/force-include/${enc(entry_id)}`);
  }

  /**
   * Polls an entry until it is included (every `interval_ms`, default 250) and returns it; throws
   * a TimeoutError-named Error after `timeout_ms` (default 30 s). `result.accepted` says whether
   * the forced request itself was accepted; `forcedResultError` turns a refusal into its typed error.
   */
  async waitForInclusion(entry_id: number | string, opts: { interval_ms?: number; timeout_ms?: number } = {}): Promise<ForceInclusionStatus> {
    const interval = opts.interval_ms ?? 250;
    const deadline = Date.now() + (opts.timeout_ms ?? 30_000);
    for (;;) {
      const st = await this.forceInclusion(entry_id);
      if (st.status === 'included') return st;
      if (Date.now() + interval > deadline) {
        const e = new Error(`forced-inclusion entry ${entry_id} still pending (deadline ${st.deadline})`);
        e.name = 'TimeoutError';
        throw e;
      }
      await new Promise((res) => setTimeout(res, interval));
    }
  }

  // ------------------------------------------------------------------ data availability

  daBatch(batch_id: number | string): Promise<DaBatch> {
    return this.request('GET', `/da/batches/${enc(batch_id)}`);
  }

  daBatches(opts: { from?: number; limit?: number } = {}): Promise<DaBatch[]> {
    return this.request('GET', `/da/batches${query({ from: opts.from, limit: opts.limit })}`);
  }

  daProof(order_id: number | string, opts: { fill_id?: number | string } = {}): Promise<DaProof> {
    return this.request('GET', `/orders/${enc(order_id)}/da-proof${query({ fill_id: opts.fill_id })}`);
  }
}
