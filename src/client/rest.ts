// HTTP client for the Ringbook API (docs/api.md): typed methods per endpoint, signed requests
// with nonces from a NonceSource (re-sent on DUPLICATE_NONCE); the transport (envelopes, typed
// errors) is http.ts. RingbookClient is one class in three files: the options, the transport and
// the nonce retry are rest_core.ts, the programmes' calls (referral, forced inclusion, data
// availability) rest_programmes.ts; here are the public and account reads, signed trading and the
// admin calls. This module stays the client's entry point (index.ts re-exports it).
import { RingbookError } from './errors.js';
import { enc, query, type FetchLike } from './http.js';
import { Agent } from './wallet.js';
import {
  amendBody, approveAgentBody, revokeAgentBody, batchBody, cancelAfterBody, cancelAllBody, cancelBody, orderBody,
  withdrawalAmountText, withdrawalBody, type BatchRequest, type SignedBody,
} from './bodies.js';
import type {
  AccountFill, AdminMarket, AdminState, AgentApproval, AgentList, AgentRevocation, AssetBalance, Balances,
  BatchItemResult, CancelAllResult, CancelResult, CreditInfo, CreditResult, DeadManKeepAlive, DeadManResult,
  DepositResult, Fees, Health, Market, MarketFees, OrderBook, OrderRecord, OrderResult, OrderStatusFilter,
  PublicTrade, ServerTime, WithdrawalResult, WithdrawalSignature,
} from './types.js';
import type {
  AmendInput, CancelInput, CreateMarketInput, DepositInput, PlaceOrderInput, WithdrawalSignatureInput, WithdrawInput,
} from './input_types.js';
import { accountAddress, hasAdminToken, signerOf, withNonce, type RingbookClientOptions } from './rest_core.js';
import { RingbookClientProgrammes } from './rest_programmes.js';

export type { RingbookClientOptions };

export class RingbookClient extends RingbookClientProgrammes {
  // Declared (not inherited) so the client's entry point shows its options and keeps its arity.
  constructor(opts: RingbookClientOptions) {
    super(opts);
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
    const a = accountAddress(this, address);
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
    const a = accountAddress(this, opts.address);
    return this.request('GET', `/account/${enc(a)}/orders${query({ status: opts.status, market_id: opts.market_id, limit: opts.limit })}`);
  }

  orderByClientId(client_order_id: string, address?: string): Promise<OrderRecord> {
    return this.request('GET', `/account/${enc(accountAddress(this, address))}/orders/by-client-id/${enc(client_order_id)}`);
  }

  fills(opts: { address?: string; limit?: number } = {}): Promise<AccountFill[]> {
    return this.request('GET', `/account/${enc(accountAddress(this, opts.address))}/fills${query({ limit: opts.limit })}`);
  }

  // ------------------------------------------------------------------ signed trading

  async placeOrder(o: PlaceOrderInput): Promise<OrderResult> {
    const w = signerOf(this);
    return withNonce(this, o.nonce, (nonce) => this.request<OrderResult>('POST', '/orders', orderBody(w, o, nonce)));
  }

  /** Cancel by `order_id` or `client_order_id` (or both, naming the same order). */
  async cancel(c: CancelInput): Promise<CancelResult> {
    const w = signerOf(this);
    return withNonce(this, c.nonce, (nonce) => this.request<CancelResult>('POST', '/orders/cancel', cancelBody(w, c, nonce)));
  }

  async amend(a: AmendInput): Promise<OrderResult> {
    const w = signerOf(this);
    return withNonce(this, a.nonce, (nonce) => this.request<OrderResult>('POST', '/orders/amend', amendBody(w, a, nonce)));
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
    return batchBody(signerOf(this), items, () => this.nonces.next());
  }

  /** Cancels the account's open orders in one market, or everywhere when `market_id` is omitted. */
  async cancelAll(market_id?: string, opts: { nonce?: number } = {}): Promise<CancelAllResult> {
    const w = signerOf(this);
    return withNonce(this, opts.nonce, (nonce) => this.request<CancelAllResult>('POST', '/orders/cancel-all', cancelAllBody(w, market_id, nonce)));
  }

  /**
   * Arms the dead-man switch: unless re-armed within `timeout_ms` (1,000 to 86,400,000; 0
   * disarms), every resting order of the wallet's address is cancelled (reason dead_man_switch).
   */
  async armDeadMan(timeout_ms: number, opts: { nonce?: number } = {}): Promise<DeadManResult> {
    const w = signerOf(this);
    return withNonce(this, opts.nonce, (nonce) => this.request<DeadManResult>('POST', '/orders/cancel-after', cancelAfterBody(w, timeout_ms, nonce)));
  }

  /**
   * Approves `agent` (an address; an `Agent`'s `agent_address`) to sign this wallet's orders,
   * cancels, amends, cancel-all, cancel-after and batches until `valid_until_ms` (epoch ms, at most
   * 180 days ahead). At most 10 live agents; approving one again renames it and moves its expiry.
   */
  async approveAgent(agent: string, name: string, valid_until_ms: number, opts: { nonce?: number } = {}): Promise<AgentApproval> {
    const w = signerOf(this);
    return withNonce(this, opts.nonce, (nonce) => this.request<AgentApproval>('POST', '/agents', approveAgentBody(w, agent, name, valid_until_ms, nonce)));
  }

  async revokeAgent(agent: string, opts: { nonce?: number } = {}): Promise<AgentRevocation> {
    const w = signerOf(this);
    return withNonce(this, opts.nonce, (nonce) => this.request<AgentRevocation>('POST', '/agents/revoke', revokeAgentBody(w, agent, nonce)));
  }

  /**
   * The live agents of `address` (default: the wallet's user). With an `Agent` client, also
   * raises the nonce floor to the agent's own mark.
   */
  async agents(address?: string): Promise<AgentList> {
    const a = accountAddress(this, address);
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
    const w = signerOf(this);
    withdrawalAmountText(wd.amount); // a bad amount throws before any nonce is taken
    return withNonce(this, wd.nonce, (nonce) => this.request<WithdrawalResult>('POST', '/withdrawals', withdrawalBody(w, wd, nonce)));
  }

  /** The operator's signature for a pending withdrawal (amount: decimal whole units, e.g. "0.5"). */
  withdrawalSignature(i: WithdrawalSignatureInput): Promise<WithdrawalSignature> {
    return this.request('POST', '/withdrawal-signature', { user: accountAddress(this, i.user), asset: i.asset, amount: i.amount, nonce: i.nonce });
  }

  // ------------------------------------------------------------------ admin

  /** Operator deposit (X-Admin-Token). `amount` is a decimal string in whole units. */
  deposit(d: DepositInput): Promise<DepositResult> {
    return this.request('POST', '/deposit', { user: d.user, asset: d.asset, amount: d.amount }, { admin: hasAdminToken(this) });
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

}

export type { AdminMarket, FetchLike };
export { RingbookError };
