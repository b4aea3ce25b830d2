// A minimal Ethereum JSON-RPC client (fetch): calls, logs, and transactions signed locally with
// @ethereumjs/tx (legacy, EIP-155) so the endpoint never holds a key. Used by the server's
// settlement link (deposits, forced inclusions, roots) and by the `ringbook contract` commands.
import { createLegacyTx } from '@ethereumjs/tx';
import { createCustomCommon, Mainnet } from '@ethereumjs/common';
import { hexToBytes } from '../da/hex.js';
import { addressFromPrivateKey, parsePrivateKey } from '../auth/sign.js';
import type { ContractAbi } from './abi_codec.js';

export class RpcError extends Error {
  constructor(message: string, readonly code: number, readonly data: string | null) {
    super(message);
  }
}

/** A transaction the chain ran but reverted (or an eth_call that reverted). */
export class RevertError extends Error {
  constructor(readonly error_name: string | null, readonly data: string | null) {
    super(`execution reverted${error_name === null ? '' : `: ${error_name}`}`);
  }
}

/**
 * The endpoint answered with an HTTP server error (5xx) and no JSON-RPC error in the body: a proxy
 * or load balancer whose node is down, an overloaded provider. Before (2026-11-29) such an answer
 * surfaced as the body's JSON parse error (an HTML page) or as an undefined result.
 */
export class RpcHttpError extends Error {
  constructor(readonly http_status: number) {
    super(`the RPC endpoint answered HTTP ${http_status}`);
  }
}

/** undici's TypeError when no answer came (refused, reset, unknown host); a timeout is a TimeoutError. */
const FETCH_FAILED_MESSAGE = 'fetch failed';
/** HTTP statuses from here on are the server's failure, not the request's. */
const HTTP_SERVER_ERROR_MIN = 500;

/**
 * Whether `e` says the endpoint did not serve the call: no connection (refused, reset), no answer
 * within RPC_TIMEOUT_MS, or an HTTP 5xx. Not a revert, nor any JSON-RPC error the node answered:
 * another endpoint would say the same (src/cluster/poster_hand_over.ts hands the poster lease over
 * on the former only).
 */
export function isEndpointFailure(e: unknown): boolean {
  if (e instanceof RpcHttpError || isUnanswered(e)) return true;
  return (e as { name?: unknown } | null)?.name === 'AbortError';
}

/**
 * Whether a fetch got no answer at all: undici's "fetch failed" TypeError (refused, reset, unknown
 * host) or a TimeoutError (AbortSignal.timeout). Also what the CLI names a URL for (cli/settlement.ts).
 */
export function isUnanswered(e: unknown): boolean {
  if (e instanceof TypeError) return e.message === FETCH_FAILED_MESSAGE;
  return (e as { name?: unknown } | null)?.name === 'TimeoutError';
}

export interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  transactionHash: string;
  logIndex: string;
}

export interface TxReceipt {
  status: string;
  gasUsed: string;
  blockNumber: string;
  transactionHash: string;
  contractAddress: string | null;
  logs: RpcLog[];
}

/** How long one JSON-RPC call may take before it fails (a hung endpoint must not stall a loop). */
export const RPC_TIMEOUT_MS = 10_000;
/** How long sendAndWait polls for a receipt, and how often. */
export const RECEIPT_WAIT_MS = 60_000;
const RECEIPT_POLL_MS = 50;
/** Gas limit of the transactions this client sends (postRoots of 64 batches needs ~1.6M). */
export const TX_GAS_LIMIT = 6_000_000n;

export class JsonRpc {
  private next_id = 1;
  constructor(readonly url: string) {}

  async call<T>(method: string, params: unknown[] = []): Promise<T> {
    try {
      return await this.callOnce<T>(method, params);
    } catch (e) {
      // A kept-alive connection the endpoint closed meanwhile fails before any answer: one retry
      // (never for a transaction submission, which must not be sent twice blindly).
      if (!(e instanceof TypeError) || method === 'eth_sendRawTransaction') throw e;
      return this.callOnce<T>(method, params);
    }
  }

  private async callOnce<T>(method: string, params: unknown[]): Promise<T> {
    const res = await fetch(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: this.next_id++, method, params }),
      signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
    });
    if (res.status >= HTTP_SERVER_ERROR_MIN) throw await serverError(res);
    const body = (await res.json()) as RpcBody<T>;
    if (body.error !== undefined) throw new RpcError(body.error.message, body.error.code, body.error.data ?? null);
    return body.result as T;
  }

  async chainId(): Promise<number> {
    return Number(await this.call<string>('eth_chainId'));
  }

  async blockNumber(): Promise<number> {
    return Number(await this.call<string>('eth_blockNumber'));
  }

  async getLogs(address: string, from_block: number, to_block: number): Promise<RpcLog[]> {
    return this.call<RpcLog[]>('eth_getLogs', [{ address, fromBlock: hexQ(from_block), toBlock: hexQ(to_block) }]);
  }

  async balance(address: string): Promise<bigint> {
    return BigInt(await this.call<string>('eth_getBalance', [address, 'latest']));
  }

  /** eth_call; a revert throws RevertError with the contract error's name when `abi` knows it. */
  async ethCall(to: string | null, data: string, from: string | null = null, value = 0n, abi: ContractAbi | null = null): Promise<string> {
    try {
      return await this.call<string>('eth_call', [{ to, data, from, value: hexQ(value) }, 'latest']);
    } catch (e) {
      if (e instanceof RpcError && (e.code === 3 || /revert/i.test(e.message))) {
        throw new RevertError(e.data !== null && abi !== null ? abi.errorName(e.data) : null, e.data);
      }
      throw e;
    }
  }

  /**
   * Signs and sends a transaction from `private_key`, after an eth_call of the same call (so a
   * revert is reported with its reason before it costs gas), and waits for its receipt.
   */
  async sendAndWait(private_key: string, to: string | null, data: string, value = 0n, abi: ContractAbi | null = null): Promise<TxReceipt> {
    const from = addressFromPrivateKey(private_key);
    await this.ethCall(to, data, from, value, abi);
    const [chain_id, nonce, gas_price] = await Promise.all([
      this.chainId(),
      this.call<string>('eth_getTransactionCount', [from, 'pending']),
      this.call<string>('eth_gasPrice'),
    ]);
    const common = createCustomCommon({ chainId: chain_id }, Mainnet, { hardfork: 'cancun' });
    const tx = createLegacyTx({
      nonce: BigInt(nonce), gasPrice: BigInt(gas_price), gasLimit: TX_GAS_LIMIT, value,
      to: to === null ? undefined : (to as `0x${string}`), data: hexToBytes(data, undefined, 'calldata'),
    }, { common }).sign(parsePrivateKey(private_key));
    const hash = await this.call<string>('eth_sendRawTransaction', ['0x' + Buffer.from(tx.serialize()).toString('hex')]);
    const deadline = Date.now() + RECEIPT_WAIT_MS;
    for (;;) {
      const receipt = await this.call<TxReceipt | null>('eth_getTransactionReceipt', [hash]);
      if (receipt !== null) {
        if (receipt.status !== '0x1') throw new RevertError(null, null);
        return receipt;
      }
      if (Date.now() > deadline) throw new Error(`transaction ${hash} not mined within ${RECEIPT_WAIT_MS} ms`);
      await new Promise((r) => setTimeout(r, RECEIPT_POLL_MS));
    }
  }
}

interface RpcBody<T> {
  result?: T;
  error?: { code: number; message: string; data?: string };
}

/** A 5xx answer's error: the node's JSON-RPC error when the body holds one (a revert stays a revert), else RpcHttpError. */
async function serverError(res: Response): Promise<Error> {
  let body: RpcBody<unknown> | null = null;
  try {
    body = JSON.parse(await res.text()) as RpcBody<unknown> | null;
  } catch {
    // Not JSON (a proxy's error page): the status is all there is.
  }
  const err = body?.error;
  if (typeof err === 'object' && err !== null && typeof err.message === 'string') return new RpcError(err.message, err.code, err.data ?? null);
  return new RpcHttpError(res.status);
}

export function hexQ(n: number | bigint): string {
  return '0x' + n.toString(16);
}
