// HTTP client for the Ringbook API (docs/api.md): typed methods per endpoint, signed requests
// with nonces from a NonceSource (re-sent on DUPLICATE_NONCE); the transport (envelopes, typed
// errors) is http.ts.
import { DuplicateNonceError, RingbookError } from './errors.js';
import { enc, HttpTransport, query, type FetchLike } from './http.js';
import { MonotonicNonce, type NonceSource } from './nonce.js';
import { Agent, type Wallet } from './wallet.js';
import {
  amendBody, approveAgentBody, revokeAgentBody, batchBody, cancelAfterBody, cancelAllBody, cancelBody, encodeForcedPayload, forcedEnvelope, forceIncludeBody, orderBody, referralBody,
  referrerText, withdrawalAmountText, withdrawalBody, type BatchRequest, type ForcedRequest, type SignedBody,
} from './bodies.js';
import type {
  AccountFill, AdminMarket, AdminState, AgentApproval, AgentList, AgentRevocation, AssetBalance, Balances,
  BatchItemResult, CancelAllResult, CancelResult, CreditInfo, CreditResult, DeadManKeepAlive, DeadManResult,
  DepositResult, Fees, Health, Market, MarketFees, OrderBook, OrderRecord, OrderResult, OrderStatusFilter,
  PublicTrade, ServerTime, WithdrawalResult, WithdrawalSignature,
} from './types.js';
import type {
  DaBatch, DaProof, ForceInclusion, ForceInclusionStatus, ReferralRegistration, ReferralStats,
} from './programme_types.js';
import type {
  AmendInput, CancelInput, CreateMarketInput, DepositInput, ForceIncludeOptions, PlaceOrderInput,
  RegisterReferralInput, WithdrawalSignatureInput, WithdrawInput,
} from './input_types.js';

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

export class RingbookClient {
  readonly base_url: string;
  readonly wallet: Wallet | Agent | undefined;
  readonly nonces: NonceSource;
  readonly envelope_nonces: NonceSource;
  readonly duplicate_nonce_retries: number;
  readonly #http: HttpTransport;

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

  /**
   * Runs a signed request with a nonce from the source. Nonces are unique and increasing, so a
   * DUPLICATE_NONCE on an auto nonce means a later request overtook this one on another
   * connection (docs/api.md "Nonces"); a refused request changed nothing, so it is re-signed with
   * a fresh nonce and sent again (at most `duplicate_nonce_retries` times).
   */
  async #withNonce<T>(explicit: number | undefined, send: (nonce: number) => Promise<T>, source: NonceSource = this.nonces): Promise<T> {
    if (explicit !== undefined) return send(explicit);
    for (let attempt = 0; ; attempt++) {
      try {
        return await send(source.next());
      } catch (e) {
        if (!(e instanceof DuplicateNonceError) || attempt >= this.duplicate_nonce_retries) throw e;
      }
    }
  }

  #signer(): Wallet | Agent {
    if (!this.wallet) throw new TypeError('this call needs a wallet (RingbookClient({wallet}))');
    return this.wallet;
  }

  #address(address?: string): string {
    const a = address ?? this.wallet?.address;
    if (!a) throw new TypeError('pass an address or give the client a wallet');
    return a;
  }

  // ------------------------------------------------------------------ public

  health(): Promise<Health> {
    return this.request('GET', '/health');
  }

  time(): Promise<ServerTime> {
    return this.request('GET', '/time');
  }

  markets(): Promise<Market[]> {
    return this.request('GET', '/markets');
  }

  orderbook(market_id: string, opts: { depth?: number } = {}): Promise<OrderBook> {
    return this.request('GET', `/orderbook/${enc(market_id)}${query({ depth: opts.depth })}`);
  }

  /** Global fees, or a market's effective fees when `market_id` is given. */
  fees(): Promise<Fees>;
  fees(market_id: string): Promise<MarketFees>;
  fees(market_id?: string): Promise<Fees | MarketFees> {
    return this.request('GET', market_id === undefined ? '/fees' : `/markets/${enc(market_id)}/fees`);
  }

  trades(market_id: string, opts: { limit?: number } = {}): Promise<PublicTrade[]> {
    return this.request('GET', `/trades/${enc(market_id)}${query({ limit: opts.limit })}`);
  }

  // ------------------------------------------------------------------ account reads

  /** Balances of `address` (default: the wallet). Also raises the nonce floor for the own wallet. */
  async balances(address?: string): Promise<Balances> {
    const a = this.#address(address);
    const raw = await this.request<Record<string, unknown>>('GET', `/account/${enc(a)}/balances`);
    const assets: Record<string, AssetBalance> = {};
    for (const [k, v] of Object.entries(raw)) {
      if (k === 'nonce_high_water' || k === 'envelope_nonce_high_water' || k === 'credit') continue;
      assets[k] = v as AssetBalance;
    }
    const nonce_high_water = Number(raw.nonce_high_water ?? 0);
    const envelope_nonce_high_water = Number(raw.envelope_nonce_high_water ?? 0);
    // An agent's nonce mark is its own (agents()), not the user's.
    if (this.wallet && !(this.wallet instanceof Agent) && a.toLowerCase() === this.wallet.address) {
      this.nonces.observe(nonce_high_water);
      this.envelope_nonces.observe(envelope_nonce_high_water);
    }
    return { assets, nonce_high_water, envelope_nonce_high_water, credit: (raw.credit ?? null) as CreditInfo | null };
  }

  /** Seeds the nonce source from the server's `nonce_high_water` (an `Agent`'s: its own mark); returns it. */
  async syncNonce(): Promise<number> {
    const w = this.wallet;
    if (w instanceof Agent) return (await this.agents()).agents.find((x) => x.agent === w.agent_address)?.nonce_high_water ?? 0;
    return (await this.balances()).nonce_high_water;
  }

  orders(opts: { address?: string; status?: OrderStatusFilter; market_id?: string; limit?: number } = {}): Promise<OrderRecord[]> {
    const a = this.#address(opts.address);
    return this.request('GET', `/account/${enc(a)}/orders${query({ status: opts.status, market_id: opts.market_id, limit: opts.limit })}`);
  }

  orderByClientId(client_order_id: string, address?: string): Promise<OrderRecord> {
    return this.request('GET', `/account/${enc(this.#address(address))}/orders/by-client-id/${enc(client_order_id)}`);
  }

  fills(opts: { address?: string; limit?: number } = {}): Promise<AccountFill[]> {
    return this.request('GET', `/account/${enc(this.#address(opts.address))}/fills${query({ limit: opts.limit })}`);
  }

  // ------------------------------------------------------------------ signed trading

  async placeOrder(o: PlaceOrderInput): Promise<OrderResult> {
    const w = this.#signer();
    return this.#withNonce(o.nonce, (nonce) => this.request<OrderResult>('POST', '/orders', orderBody(w, o, nonce)));
  }

  /** Cancel by `order_id` or `client_order_id` (or both, naming the same order). */
  async cancel(c: CancelInput): Promise<CancelResult> {
    const w = this.#signer();
    return this.#withNonce(c.nonce, (nonce) => this.request<CancelResult>('POST', '/orders/cancel', cancelBody(w, c, nonce)));
  }

  async amend(a: AmendInput): Promise<OrderResult> {
    const w = this.#signer();
    return this.#withNonce(a.nonce, (nonce) => this.request<OrderResult>('POST', '/orders/amend', amendBody(w, a, nonce)));
  }

  /**
   * `POST /orders/batch`: up to 20 orders, cancels, amends and cancel-alls applied in order,
   * contiguously, in one engine batch; one result per item (`ok` with the direct call's data, or
   * the item's error). Items take consecutive nonces from the client's nonce source.
   */
  batch(items: readonly BatchRequest[]): Promise<BatchItemResult[]> {
    return this.request<BatchItemResult[]>('POST', '/orders/batch', this.batchRequestBody(items));
  }

  /** Several orders in one call (a batch of `order` items). */
  placeOrders(orders: readonly Omit<PlaceOrderInput, 'nonce'>[]): Promise<BatchItemResult<OrderResult>[]> {
    return this.batch(orders.map((o) => ({ kind: 'order' as const, ...o }))) as Promise<BatchItemResult<OrderResult>[]>;
  }

  /** The signed body of a batch (for `RingbookSocket.post('/orders/batch', ...)`), nonces taken now. */
  batchRequestBody(items: readonly BatchRequest[]): { requests: SignedBody[] } {
    return batchBody(this.#signer(), items, () => this.nonces.next());
  }

  /** Cancels the account's open orders in one market, or everywhere when `market_id` is omitted. */
  async cancelAll(market_id?: string, opts: { nonce?: number } = {}): Promise<CancelAllResult> {
    const w = this.#signer();
    return this.#withNonce(opts.nonce, (nonce) => this.request<CancelAllResult>('POST', '/orders/cancel-all', cancelAllBody(w, market_id, nonce)));
  }

  /**
   * Arms the dead-man switch: unless re-armed within `timeout_ms` (1,000 to 86,400,000; 0
   * disarms), every resting order of the wallet's address is cancelled (reason dead_man_switch).
   */
  async armDeadMan(timeout_ms: number, opts: { nonce?: number } = {}): Promise<DeadManResult> {
    const w = this.#signer();
    return this.#withNonce(opts.nonce, (nonce) => this.request<DeadManResult>('POST', '/orders/cancel-after', cancelAfterBody(w, timeout_ms, nonce)));
  }

  /**
   * Approves `agent` (an address; an `Agent`'s `agent_address`) to sign this wallet's orders,
   * cancels, amends, cancel-all, cancel-after and batches until `valid_until_ms` (epoch ms, at most
   * 180 days ahead). At most 10 live agents; approving one again renames it and moves its expiry.
   */
  async approveAgent(agent: string, name: string, valid_until_ms: number, opts: { nonce?: number } = {}): Promise<AgentApproval> {
    const w = this.#signer();
    return this.#withNonce(opts.nonce, (nonce) => this.request<AgentApproval>('POST', '/agents', approveAgentBody(w, agent, name, valid_until_ms, nonce)));
  }

  async revokeAgent(agent: string, opts: { nonce?: number } = {}): Promise<AgentRevocation> {
    const w = this.#signer();
    return this.#withNonce(opts.nonce, (nonce) => this.request<AgentRevocation>('POST', '/agents/revoke', revokeAgentBody(w, agent, nonce)));
  }

  /**
   * The live agents of `address` (default: the wallet's user). With an `Agent` client, also
   * raises the nonce floor to the agent's own mark.
   */
  async agents(address?: string): Promise<AgentList> {
    const a = this.#address(address);
    const list = await this.request<AgentList>('GET', `/account/${enc(a)}/agents`);
    const w = this.wallet;
    if (w instanceof Agent && a.toLowerCase() === w.address) {
      const mine = list.agents.find((x) => x.agent === w.agent_address);
      if (mine !== undefined) this.nonces.observe(mine.nonce_high_water);
    }
    return list;
  }

  /**
   * Keeps the dead-man switch armed while this process lives: arms `timeout_ms` now and re-arms
   * every `every_ms` (default a third of the timeout, so two re-arms may fail before it fires).
   * If the process dies or loses the exchange, the switch fires. Errors go to `onError`.
   */
  async keepDeadManAlive(timeout_ms: number, opts: { every_ms?: number; onError?: (e: unknown) => void } = {}): Promise<DeadManKeepAlive> {
    const every_ms = opts.every_ms ?? Math.floor(timeout_ms / 3);
    if (!(every_ms > 0 && every_ms < timeout_ms)) throw new RangeError('keepDeadManAlive: every_ms must be in (0, timeout_ms)');
    let last: DeadManResult | null = await this.armDeadMan(timeout_ms);
    const timer = setInterval(() => {
      this.armDeadMan(timeout_ms).then((r) => { last = r; }, (e: unknown) => opts.onError?.(e));
    }, every_ms);
    if (typeof timer.unref === 'function') timer.unref();
    return {
      get last() { return last; },
      stop: async ({ disarm = false } = {}) => {
        clearInterval(timer);
        if (disarm) last = await this.armDeadMan(0);
      },
    };
  }

  /** `amount` in the asset's smallest on-chain unit (wei for ETH). */
  async withdraw(wd: WithdrawInput): Promise<WithdrawalResult> {
    const w = this.#signer();
    withdrawalAmountText(wd.amount); // a bad amount throws before any nonce is taken
    return this.#withNonce(wd.nonce, (nonce) => this.request<WithdrawalResult>('POST', '/withdrawals', withdrawalBody(w, wd, nonce)));
  }

  /** The operator's signature for a pending withdrawal (amount: decimal whole units, e.g. "0.5"). */
  withdrawalSignature(i: WithdrawalSignatureInput): Promise<WithdrawalSignature> {
    return this.request('POST', '/withdrawal-signature', { user: this.#address(i.user), asset: i.asset, amount: i.amount, nonce: i.nonce });
  }

  // ------------------------------------------------------------------ referral programme

  /**
   * Registers the client's wallet as referred by `referrer` (both must be accounts; once set, the
   * referrer never changes). Signed like every operation, with a nonce from the nonce source.
   */
  async registerReferral(r: RegisterReferralInput): Promise<ReferralRegistration> {
    const w = this.#signer();
    referrerText(r.referrer); // a malformed referrer throws before any nonce is taken
    return this.#withNonce(r.nonce, (nonce) => this.request<ReferralRegistration>('POST', '/referral/register', referralBody(w, r.referrer, nonce)));
  }

  /** Referral statistics of `address` (default: the wallet); any well-formed address answers. */
  referral(address?: string, opts: { limit?: number } = {}): Promise<ReferralStats> {
    const q = opts.limit === undefined ? '' : `?limit=${opts.limit}`;
    return this.request('GET', `/referral/${enc(this.#address(address))}${q}`);
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
    const w = this.#signer();
    const payload_nonce = opts.payload_nonce ?? this.nonces.next();
    this.nonces.observe(payload_nonce);
    return this.#withNonce(opts.nonce, (nonce) => {
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
    const w = this.#signer();
    const hex = typeof payload === 'string' ? payload : encodeForcedPayload(payload, { kind: typeof payload.kind === 'string' });
    return this.#withNonce(opts.nonce, (nonce) => this.request<ForceInclusion>('POST', '/force-include', forceIncludeBody(w, hex, nonce)), this.envelope_nonces);
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

  // ------------------------------------------------------------------ admin

  /** Operator deposit (X-Admin-Token). `amount` is a decimal string in whole units. */
  deposit(d: DepositInput): Promise<DepositResult> {
    return this.request('POST', '/deposit', { user: d.user, asset: d.asset, amount: d.amount }, { admin: this.#http.has_admin_token });
  }

  adminState(): Promise<AdminState> {
    return this.request('GET', '/admin/state', undefined, { admin: true });
  }

  createMarket(m: CreateMarketInput): Promise<Market> {
    const body: Record<string, unknown> = {};
    if (m.id !== undefined) body.id = m.id;
    body.base = m.base;
    body.quote = m.quote;
    body.tick_size = m.tick_size;
    body.lot_size = m.lot_size;
    return this.request('POST', '/admin/markets', body, { admin: true });
  }

  pauseMarket(market_id: string): Promise<Market> {
    return this.request('POST', `/admin/markets/${enc(market_id)}/pause`, {}, { admin: true });
  }

  resumeMarket(market_id: string): Promise<Market> {
    return this.request('POST', `/admin/markets/${enc(market_id)}/resume`, {}, { admin: true });
  }

  setFees(f: Fees): Promise<Fees> {
    return this.request('PUT', '/admin/fees', { maker_fee_bps: f.maker_fee_bps, taker_fee_bps: f.taker_fee_bps }, { admin: true });
  }

  setMarketFees(market_id: string, f: Fees): Promise<MarketFees> {
    return this.request('PUT', `/admin/markets/${enc(market_id)}/fees`, { maker_fee_bps: f.maker_fee_bps, taker_fee_bps: f.taker_fee_bps }, { admin: true });
  }

  setCredit(address: string, c: { credit_limit: number; auto_cancel_ratio?: number }): Promise<CreditResult> {
    const body: Record<string, unknown> = { credit_limit: c.credit_limit };
    if (c.auto_cancel_ratio !== undefined) body.auto_cancel_ratio = c.auto_cancel_ratio;
    return this.request('PUT', `/admin/accounts/${enc(address)}/credit`, body, { admin: true });
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

export type { AdminMarket, FetchLike };
export { RingbookError };
