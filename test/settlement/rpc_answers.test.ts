// What the JSON-RPC client (src/settlement/rpc.ts) makes of an endpoint's failed or odd answers,
// and which of them count as the endpoint failing (isEndpointFailure: the poster hands its lease
// over for `rpc_failing` on those only; docs/scale-out.md, "Handing the lease over"). The endpoint
// failing: no connection or answer, HTTP 429 (rate limited) whatever its body, HTTP 5xx without a
// JSON-RPC error, a provider's "internal error" or "limit exceeded", an answer past its limit. Not:
// a revert or the node's verdict on the call (a nonce too low), on whatever status it came.
// Before (2026-11-29, h31s), a 429 and a 5xx carrying a JSON-RPC error did not count, and a body
// was read whatever its length. Real parts: JsonRpc over fetch against a loopback endpoint
// (failing_endpoint.ts) answering as each test says.
// The same endpoint, streaming without end or never answering, against the project's other HTTP
// clients of servers they need not trust, which share JsonRpc's bounded reader
// (util/bounded_answer.ts): `ringbook verify`'s DA fetch (getData) and withdraw-onchain's
// signature fetch. Before (2026-11-29, h32b) both read whatever came, with no timeout: an endless
// body grew memory until it ended, a silent server hung them forever.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isEndpointFailure, JsonRpc, RevertError, RPC_ANSWER_BYTES_MAX, RPC_ERROR_BODY_BYTES_MAX, RpcAnswerTooLargeError, RpcError, RpcHttpError,
} from '../../src/settlement/rpc.js';
import { ENDLESS_BYTES_MAX, FailingEndpoint, type CannedAnswer } from './failing_endpoint.js';
import { getData } from '../../src/da/verifier.js';
import { fetchSignature, SIGNATURE_ANSWER_BYTES_MAX } from '../../src/cli/settlement.js';
import { AnswerTooLargeError } from '../../src/util/bounded_answer.js';

let endpoint: FailingEndpoint;
let rpc: JsonRpc;
beforeAll(async () => {
  endpoint = await FailingEndpoint.start();
  rpc = new JsonRpc(endpoint.url);
});
afterAll(async () => {
  await endpoint?.close();
});

const rpcError = (status: number, code: number, message: string, data?: string): CannedAnswer =>
  ({ status, body: JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code, message, data } }) });

/** The error eth_blockNumber fails with when the endpoint answers `mode`. */
async function failureOf(mode: CannedAnswer | 'endless'): Promise<unknown> {
  endpoint.mode = mode;
  return rpc.blockNumber().then(() => {
    throw new Error('expected the call to fail');
  }, (e: unknown) => e);
}

describe('which failures count as the endpoint failing (isEndpointFailure)', () => {
  it('no connection, no answer in time, HTTP 429 or 5xx, a provider\'s internal error or limit, an answer past its limit; not a revert or a node\'s verdict', () => {
    expect(isEndpointFailure(new TypeError('fetch failed'))).toBe(true);
    expect(isEndpointFailure(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))).toBe(true);
    expect(isEndpointFailure(new RpcHttpError(502))).toBe(true);
    expect(isEndpointFailure(new RpcHttpError(429))).toBe(true);
    expect(isEndpointFailure(new RpcAnswerTooLargeError(RPC_ANSWER_BYTES_MAX))).toBe(true);
    expect(isEndpointFailure(new RpcError('daily request count exceeded', -32005, null, 429))).toBe(true);
    expect(isEndpointFailure(new RpcError('Internal error', -32603, null, 500))).toBe(true);
    expect(isEndpointFailure(new RpcError('rate limit', -32005, null))).toBe(true);
    expect(isEndpointFailure(new RpcError('backend unavailable', -32002, null, 503))).toBe(true);

    expect(isEndpointFailure(new RevertError('BadBatchRange', '0x'))).toBe(false);
    expect(isEndpointFailure(new RpcError('nonce too low', -32000, null))).toBe(false);
    expect(isEndpointFailure(new RpcError('nonce too low', -32000, null, 500))).toBe(false);
    expect(isEndpointFailure(new RpcError('execution reverted', 3, '0x', 500))).toBe(false);
    // Hardhat answers a revert as -32603 with the reason in its message.
    expect(isEndpointFailure(new RpcError('VM Exception while processing transaction: reverted with reason string', -32603, null))).toBe(false);
    expect(isEndpointFailure(new Error('published batch 2 missing from the DA store'))).toBe(false);
    expect(isEndpointFailure(new TypeError('invalid calldata: expected hex'))).toBe(false);
  });
});

describe('JsonRpc against an endpoint that fails', () => {
  it('HTTP 429 counts whatever its body; its JSON-RPC error is kept with the status', async () => {
    const limited = await failureOf(rpcError(429, -32005, 'daily request count exceeded'));
    expect(limited).toBeInstanceOf(RpcError);
    expect(limited).toMatchObject({ code: -32005, http_status: 429, message: 'daily request count exceeded (HTTP 429)' });
    expect(isEndpointFailure(limited)).toBe(true);
    const page = await failureOf({ status: 429, body: 'Too Many Requests' });
    expect(page).toBeInstanceOf(RpcHttpError);
    expect(isEndpointFailure(page)).toBe(true);
  });

  it('a 5xx carrying a provider\'s internal error counts; a 5xx carrying a revert is a revert and does not', async () => {
    const internal = await failureOf(rpcError(500, -32603, 'Internal error'));
    expect(internal).toMatchObject({ code: -32603, http_status: 500 });
    expect(isEndpointFailure(internal)).toBe(true);

    endpoint.mode = rpcError(500, 3, 'execution reverted', '0x');
    const reverted = await rpc.ethCall('0x' + '11'.repeat(20), '0x').catch((e: unknown) => e);
    expect(reverted).toBeInstanceOf(RevertError);
    expect(isEndpointFailure(reverted)).toBe(false);

    const nonce = await failureOf(rpcError(200, -32000, 'nonce too low'));
    expect(nonce).toMatchObject({ code: -32000, http_status: 200, message: 'nonce too low' });
    expect(isEndpointFailure(nonce)).toBe(false);
  });

  it('an endless body is cut at RPC_ANSWER_BYTES_MAX with a clear error, not read into memory', async () => {
    const e = await failureOf('endless');
    expect(e).toBeInstanceOf(RpcAnswerTooLargeError);
    expect((e as Error).message).toBe(`the RPC endpoint's answer is longer than ${RPC_ANSWER_BYTES_MAX} bytes; not read further`);
    expect(isEndpointFailure(e)).toBe(true);
    // The client closed the connection: the endpoint stopped short of its own bound.
    await until(() => endpoint.endless.cut);
    expect(endpoint.endless.bytes).toBeLessThan(ENDLESS_BYTES_MAX);

    // A Content-Length past the limit is refused before any byte of the body is read.
    expect(await failureOf({ status: 200, body: '{', content_length: RPC_ANSWER_BYTES_MAX + 1 })).toBeInstanceOf(RpcAnswerTooLargeError);
  });

  it('an error answer\'s body is read up to RPC_ERROR_BODY_BYTES_MAX: past it the status is all there is', async () => {
    const long = rpcError(503, -32603, 'x'.repeat(RPC_ERROR_BODY_BYTES_MAX));
    const e = await failureOf(long);
    expect(e).toBeInstanceOf(RpcHttpError);
    expect(e).toMatchObject({ http_status: 503 });
  });
});

/** Small bounds so that a test takes milliseconds; on the old code (none) these tests hang or read ENDLESS_BYTES_MAX. */
const TEST_TIMEOUT_MS = 100;
const TEST_DA_BYTES_MAX = 1024 * 1024;
/** Well above TEST_TIMEOUT_MS x attempts, bounded: the old code's hang fails here. */
const HANG_TEST_MS = 5_000;
const SIGNATURE_ASK = { user: '0x' + '11'.repeat(20), asset: 'ETH', amount: '1', nonce: 1 };

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(() => {
    throw new Error('expected the fetch to fail');
  }, (e: unknown) => e);
}

describe('the other HTTP clients of untrusted servers: bounded reads, timeouts', () => {
  it('ringbook verify\'s DA fetch: an endless body is cut at its bound, an error naming the URL and the bound', async () => {
    endpoint.mode = 'endless';
    const e = await failure(getData(endpoint.url, '/da/batches?from=1&limit=100', { retries: 0, timeout_ms: HANG_TEST_MS, bytes_max: TEST_DA_BYTES_MAX }));
    expect(e).toBeInstanceOf(AnswerTooLargeError);
    expect((e as Error).message).toBe(`the answer of ${endpoint.url}/da/batches?from=1&limit=100 is longer than ${TEST_DA_BYTES_MAX} bytes; not read further`);
    await until(() => endpoint.endless.cut);
    expect(endpoint.endless.bytes).toBeLessThan(ENDLESS_BYTES_MAX);
  }, HANG_TEST_MS);

  it('ringbook verify\'s DA fetch: a server that never answers, or stalls mid-body, times out; each attempt bounded, then it gives up', async () => {
    for (const [mode, retries] of [['silent', 1], ['stall', 0]] as const) {
      endpoint.mode = mode;
      const e = await failure(getData(endpoint.url, '/da/batches/1', { retries, timeout_ms: TEST_TIMEOUT_MS }));
      expect((e as Error).message).toBe(`GET ${endpoint.url}/da/batches/1: gave up after ${retries + 1} attempts: no whole answer within ${TEST_TIMEOUT_MS} ms`);
    }
  }, HANG_TEST_MS);

  it('withdraw-onchain\'s signature fetch: an endless body is cut at SIGNATURE_ANSWER_BYTES_MAX; a silent server times out, named', async () => {
    endpoint.mode = 'endless';
    const e = await failure(fetchSignature(endpoint.url, SIGNATURE_ASK));
    expect(e).toBeInstanceOf(AnswerTooLargeError);
    expect((e as Error).message).toBe(`the answer of ${endpoint.url}/withdrawal-signature is longer than ${SIGNATURE_ANSWER_BYTES_MAX} bytes; not read further`);
    await until(() => endpoint.endless.cut);
    expect(endpoint.endless.bytes).toBeLessThan(ENDLESS_BYTES_MAX);

    for (const mode of ['silent', 'stall'] as const) {
      endpoint.mode = mode;
      const silent = await failure(fetchSignature(endpoint.url, SIGNATURE_ASK, { timeout_ms: TEST_TIMEOUT_MS }));
      expect((silent as Error).message).toBe(`no whole answer within ${TEST_TIMEOUT_MS} ms from the server at ${endpoint.url}/withdrawal-signature (--url)`);
    }
  }, HANG_TEST_MS);
});

/** Waits (bounded) until `f` holds: the endpoint sees the connection close a moment after the client. */
async function until(f: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !f(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(f()).toBe(true);
}
