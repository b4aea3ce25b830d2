// A minimal Ethereum JSON-RPC client (fetch): calls, logs, and transactions signed locally with
// @ethereumjs/tx (legacy, EIP-155) so the endpoint never holds a key. Used by the server's
// settlement link (deposits, forced inclusions, roots) and by the `ringbook contract` commands.
import { createLegacyTx } from '@ethereumjs/tx';
import { createCustomCommon, Mainnet } from '@ethereumjs/common';
import { hexToBytes } from '../da/hex.js';
import { addressFromPrivateKey, parsePrivateKey } from '../auth/sign.js';
import type { ContractAbi } from './abi_codec.js';
import { isTimeout, readAnswer } from '../util/bounded_answer.js';

const HTTP_OK = 200;

export class RpcError extends Error {
  /** `http_status`: the answer's HTTP status (200, or the 429/5xx a JSON-RPC error came with). */
  constructor(message: string, readonly code: number, readonly data: string | null, readonly http_status = HTTP_OK) {
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
 * The endpoint answered with an HTTP server error (5xx) or "too many requests" (429) and no
 * JSON-RPC error in the body: a proxy or load balancer whose node is down, an overloaded or
 * rate-limiting provider. Before (2026-11-29) such an answer surfaced as the body's JSON parse
 * error (an HTML page) or as an undefined result.
 */
export class RpcHttpError extends Error {
  constructor(readonly http_status: number) {
    super(`the RPC endpoint answered HTTP ${http_status}`);
  }
}

/**
 * The endpoint's answer was longer than its limit (RPC_ANSWER_BYTES_MAX; RPC_ERROR_BODY_BYTES_MAX
 * for a 429/5xx's body): read no further, so a broken or hostile endpoint streaming without end
 * cannot grow this process's memory.
 */
export class RpcAnswerTooLargeError extends Error {
  constructor(readonly bytes_max: number) {
    super(`the RPC endpoint's answer is longer than ${bytes_max} bytes; not read further`);
  }
}

/** The endpoint's answer at most `bytes_max` bytes (util/bounded_answer.ts); past it RpcAnswerTooLargeError. */
function readRpcAnswer(res: Response, bytes_max: number): Promise<string> {
  return readAnswer(res, bytes_max, () => new RpcAnswerTooLargeError(bytes_max));
}

/** undici's TypeError when no answer came (refused, reset, unknown host); a timeout is a TimeoutError. */
const FETCH_FAILED_MESSAGE = 'fetch failed';
/** HTTP statuses from here on are the server's failure, not the request's. */
const HTTP_SERVER_ERROR_MIN = 500;
/** "Too many requests": a provider's rate limit, the endpoint refusing to serve now. */
const HTTP_TOO_MANY_REQUESTS = 429;
/**
 * JSON-RPC error codes that say the endpoint could not serve the call, whatever the call: -32603
 * "internal error" (JSON-RPC 2.0), -32002 "resource unavailable" and -32005 "limit exceeded"
 * (EIP-1474; a provider's rate limit or quota). The node's verdict on the call itself (a revert,
 * code 3; -32000 "nonce too low", "insufficient funds"; -32003 "transaction rejected"; -32602
 * "invalid params") is not: another endpoint would say the same.
 */
const ENDPOINT_ERROR_CODES: ReadonlySet<number> = new Set([-32603, -32002, -32005]);
/**
 * Largest answer read from an endpoint. The biggest this code asks for is an eth_getLogs over
 * settlement.logs_blocks_max blocks, which providers cap at 10,000 logs (~1 KB of JSON each: ~10
 * MB); the poster's calls answer in bytes. Three times that, so no honest answer comes near.
 */
export const RPC_ANSWER_BYTES_MAX = 32 * 1024 * 1024;
/**
 * Largest body read from an error answer (429, 5xx): a JSON-RPC error or a proxy's error page fits
 * in a few KB; past this the status is all there is.
 */
export const RPC_ERROR_BODY_BYTES_MAX = 64 * 1024;
const REVERT_MESSAGE = /revert/i;

/** Whether a JSON-RPC error says the call reverted (code 3, or a node that says so only in its message: Hardhat's -32603). */
function isRevert(e: RpcError): boolean {
  return e.code === 3 || REVERT_MESSAGE.test(e.message);
}

/**
 * Whether `e` says the endpoint did not serve the call: no connection (refused, reset), no answer
 * within RPC_TIMEOUT_MS, an answer longer than RPC_ANSWER_BYTES_MAX, HTTP 429 (rate limited)
 * whatever its body, HTTP 5xx without a JSON-RPC error, or a JSON-RPC error whose code says the
 * endpoint failed (ENDPOINT_ERROR_CODES: "internal error", "limit exceeded") unless it is a revert.
 * Not a revert, nor the node's verdict on the call (a nonce too low), on whatever status it came:
 * another endpoint would say the same (src/cluster/poster_hand_over.ts hands the poster lease over
 * on the former only). Before (2026-11-29, h31s), a 429 and a 5xx carrying a JSON-RPC error body
 * ("internal error") did not count.
 */
export function isEndpointFailure(e: unknown): boolean {
  if (e instanceof RpcHttpError || e instanceof RpcAnswerTooLargeError || isUnanswered(e)) return true;
  if (e instanceof RpcError) return e.http_status === HTTP_TOO_MANY_REQUESTS || (ENDPOINT_ERROR_CODES.has(e.code) && !isRevert(e));
  return (e as { name?: unknown } | null)?.name === 'AbortError';
}

/**
 * Whether a fetch got no answer at all: undici's "fetch failed" TypeError (refused, reset, unknown
 * host) or a TimeoutError (AbortSignal.timeout). Also what the CLI names a URL for (cli/settlement.ts).
 */
export function isUnanswered(e: unknown): boolean {
  if (e instanceof TypeError) return e.message === FETCH_FAILED_MESSAGE;
  return isTimeout(e);
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
  /**
   * `on_answer`: called after each call the endpoint answered with a result (the cluster poster
   * starts its rpc_failing window after a round's last answer, not at the round's start).
   */
  constructor(readonly url: string, private readonly on_answer: () => void = () => {}) {}

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
    if (res.status >= HTTP_SERVER_ERROR_MIN || res.status === HTTP_TOO_MANY_REQUESTS) throw await failedAnswerError(res);
    const body = JSON.parse(await readRpcAnswer(res, RPC_ANSWER_BYTES_MAX)) as RpcBody<T>;
    if (body.error !== undefined) throw new RpcError(body.error.message, body.error.code, body.error.data ?? null);
    this.on_answer();
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
      if (e instanceof RpcError && isRevert(e)) {
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

/**
 * A 429 or 5xx answer's error: the node's JSON-RPC error when the body holds one (a revert stays a
 * revert; its HTTP status kept for isEndpointFailure), else RpcHttpError.
 */
async function failedAnswerError(res: Response): Promise<Error> {
  let body: RpcBody<unknown> | null = null;
  try {
    body = JSON.parse(await readRpcAnswer(res, RPC_ERROR_BODY_BYTES_MAX)) as RpcBody<unknown> | null;
  } catch {
    // Not JSON (a proxy's error page), or longer than an error body: the status is all there is.
  }
  const err = body?.error;
  if (typeof err === 'object' && err !== null && typeof err.message === 'string') {
    return new RpcError(`${err.message} (HTTP ${res.status})`, err.code, err.data ?? null, res.status);
  }
  return new RpcHttpError(res.status);
}

export function hexQ(n: number | bigint): string {
  return '0x' + n.toString(16);
}
