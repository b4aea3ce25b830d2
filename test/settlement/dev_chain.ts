// An in-process Ethereum chain for tests: @ethereumjs/vm behind a small JSON-RPC shim on a
// loopback port. Every transaction is mined at once in its own block (like anvil's automine);
// the clock is the test's (increaseTime moves it, as evm_increaseTime does). Only the methods
// the settlement code uses are served.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createVM, runTx, type VM } from '@ethereumjs/vm';
import { createBlock } from '@ethereumjs/block';
import { createCustomCommon, Mainnet, type Common } from '@ethereumjs/common';
import { createTxFromRLP } from '@ethereumjs/tx';
import { Account, createAddressFromString, bytesToHex } from '@ethereumjs/util';
import { hexToBytes } from '../../src/da/hex.js';
import { JsonRpc, type RpcLog, type TxReceipt } from '../../src/settlement/rpc.js';
import { addressFromPrivateKey } from '../../src/auth/sign.js';
import { ETH_ASSET_ADDRESS } from '../../src/auth/withdrawal.js';
import { deploySettlement, SettlementContract } from '../../src/settlement/contract.js';

const GAS_PRICE = 1_000_000_000n;
const BLOCK_GAS_LIMIT = 30_000_000n;

export class DevChain {
  private constructor(readonly vm: VM, readonly common: Common, readonly chain_id: number) {}
  private number = 1n;
  /** Seconds; starts at the machine's clock. */
  time_s = BigInt(Math.floor(Date.now() / 1000));
  private readonly logs: RpcLog[] = [];
  private readonly receipts = new Map<string, TxReceipt>();
  private queue: Promise<unknown> = Promise.resolve();
  private server: http.Server | null = null;
  url = '';
  /**
   * What the chain refused so far: eth_calls that reverted (a transaction's simulation among
   * them), raw transactions it could not run (a nonce already used) and transactions mined
   * reverted. Two root posters racing show here (test/settlement/settlement_poster_lease.test.ts).
   */
  readonly refused = { calls_reverted: 0, txs_refused: 0, txs_reverted: 0 };

  static async create(chain_id: number, funded: readonly string[]): Promise<DevChain> {
    const common = createCustomCommon({ chainId: chain_id }, Mainnet, { hardfork: 'cancun' });
    const vm = await createVM({ common });
    const chain = new DevChain(vm, common, chain_id);
    for (const a of funded) await chain.fund(a, 10n ** 24n);
    return chain;
  }

  async fund(address: string, wei: bigint): Promise<void> {
    const addr = createAddressFromString(address);
    const acc = (await this.vm.stateManager.getAccount(addr)) ?? new Account();
    acc.balance += wei;
    await this.vm.stateManager.putAccount(addr, acc);
  }

  /** Copies the code (not the storage) of the contract at `from` to `to` (anvil_setCode). */
  async copyCode(from: string, to: string): Promise<void> {
    const code = await this.vm.stateManager.getCode(createAddressFromString(from));
    await this.vm.stateManager.putCode(createAddressFromString(to), code);
  }

  increaseTime(seconds: number): void {
    this.time_s += BigInt(seconds);
  }

  private block(): ReturnType<typeof createBlock> {
    return createBlock({
      header: { number: this.number, timestamp: this.time_s, gasLimit: BLOCK_GAS_LIMIT, baseFeePerGas: GAS_PRICE },
    }, { common: this.common, skipConsensusFormatValidation: true });
  }

  private serial<T>(f: () => Promise<T>): Promise<T> {
    const p = this.queue.then(f, f);
    this.queue = p.catch(() => undefined);
    return p;
  }

  private async sendRaw(raw: string): Promise<string> {
    const tx = createTxFromRLP(hexToBytes(raw, undefined, 'raw tx'), { common: this.common });
    const hash = bytesToHex(tx.hash());
    const block = this.block();
    const r = await runTx(this.vm, { tx, block, skipHardForkValidation: true }).catch((e: unknown) => {
      this.refused.txs_refused++;
      throw e;
    });
    if (r.execResult.exceptionError) this.refused.txs_reverted++;
    const number = '0x' + this.number.toString(16);
    this.number++;
    const logs: RpcLog[] = (r.execResult.exceptionError ? [] : r.receipt.logs).map((l, i) => ({
      address: bytesToHex(l[0]).toLowerCase(), topics: l[1].map((t) => bytesToHex(t)), data: bytesToHex(l[2]),
      blockNumber: number, transactionHash: hash, logIndex: '0x' + i.toString(16),
    }));
    this.logs.push(...logs);
    this.receipts.set(hash, {
      status: r.execResult.exceptionError ? '0x0' : '0x1',
      gasUsed: '0x' + r.totalGasSpent.toString(16),
      blockNumber: number,
      transactionHash: hash,
      contractAddress: r.createdAddress ? r.createdAddress.toString() : null,
      logs,
    });
    return hash;
  }

  private async ethCall(p: { to?: string | null; data?: string; from?: string | null; value?: string }): Promise<string> {
    await this.vm.stateManager.checkpoint();
    try {
      const r = await this.vm.evm.runCall({
        to: p.to ? createAddressFromString(p.to) : undefined,
        caller: p.from ? createAddressFromString(p.from) : undefined,
        origin: p.from ? createAddressFromString(p.from) : undefined,
        data: hexToBytes(p.data ?? '0x', undefined, 'data'),
        value: p.value ? BigInt(p.value) : 0n,
        gasLimit: BLOCK_GAS_LIMIT,
        block: this.block(),
        skipBalance: true,
      });
      const out = bytesToHex(r.execResult.returnValue);
      if (r.execResult.exceptionError) {
        this.refused.calls_reverted++;
        throw Object.assign(new Error('execution reverted'), { rpc_code: 3, rpc_data: out });
      }
      return out;
    } finally {
      await this.vm.stateManager.revert();
    }
  }

  /** One JSON-RPC method (the shim's dispatcher; tests may call it directly). */
  async rpc(method: string, params: unknown[]): Promise<unknown> {
    switch (method) {
      case 'eth_chainId': return '0x' + this.chain_id.toString(16);
      case 'eth_blockNumber': return '0x' + (this.number - 1n).toString(16);
      case 'eth_gasPrice': return '0x' + GAS_PRICE.toString(16);
      case 'eth_getTransactionCount': {
        const acc = await this.vm.stateManager.getAccount(createAddressFromString(params[0] as string));
        return '0x' + (acc?.nonce ?? 0n).toString(16);
      }
      case 'eth_getBalance': {
        const acc = await this.vm.stateManager.getAccount(createAddressFromString(params[0] as string));
        return '0x' + (acc?.balance ?? 0n).toString(16);
      }
      case 'eth_sendRawTransaction': return this.serial(() => this.sendRaw(params[0] as string));
      case 'eth_getTransactionReceipt': return this.receipts.get(params[0] as string) ?? null;
      case 'eth_call': return this.serial(() => this.ethCall(params[0] as Parameters<DevChain['ethCall']>[0]));
      case 'eth_getLogs': {
        const f = params[0] as { address?: string; fromBlock?: string; toBlock?: string };
        const from = BigInt(f.fromBlock ?? '0x0');
        const to = f.toBlock === undefined || f.toBlock === 'latest' ? this.number : BigInt(f.toBlock);
        return this.logs.filter((l) => BigInt(l.blockNumber) >= from && BigInt(l.blockNumber) <= to &&
          (f.address === undefined || l.address === f.address.toLowerCase()));
      }
      default: throw Object.assign(new Error(`method ${method} not served by the dev chain`), { rpc_code: -32601 });
    }
  }

  /** Serves the JSON-RPC shim on 127.0.0.1 (a free port). */
  async listen(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let id: unknown = null;
        void (async () => {
          try {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; method: string; params?: unknown[] };
            id = body.id;
            const result = await this.rpc(body.method, body.params ?? []);
            res.end(JSON.stringify({ jsonrpc: '2.0', id, result }));
          } catch (e) {
            const err = e as Error & { rpc_code?: number; rpc_data?: string };
            res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: err.rpc_code ?? -32000, message: err.message, data: err.rpc_data } }));
          }
        })();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    if (this.server !== null) await new Promise<void>((r) => this.server!.close(() => r()));
  }
}

/**
 * Deploys Settlement with the server's default assets (config/default.json: ETH, BTC, USDC, whose
 * token addresses the contract only records), as the chain link tests run the server on them.
 */
export async function deployForServerDefaults(rpc: JsonRpc, operator_key: string, operator: string): Promise<Awaited<ReturnType<typeof deploySettlement>>> {
  return deploySettlement(rpc, operator_key, operator, [
    { address: ETH_ASSET_ADDRESS, decimals: 18 },
    { address: '0x2260fac5e5542a773aa44fbcfedf7c193bc2c599', decimals: 8 },
    { address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', decimals: 6 },
  ]);
}

/** The chain id and operator (key, address) the settlement tests run with. */
export const CHAIN_ID = 31337;
export const OPERATOR_KEY = '0x' + '5a'.repeat(32);
export const OPERATOR = addressFromPrivateKey(OPERATOR_KEY);

export interface DevSettlement {
  chain: DevChain;
  rpc: JsonRpc;
  deployed: Awaited<ReturnType<typeof deploySettlement>>;
  contract: SettlementContract;
}

/** A dev chain funding the operator and `accounts`, on a loopback port, with Settlement deployed for the server's default assets. */
export async function devSettlement(accounts: string[]): Promise<DevSettlement> {
  const chain = await DevChain.create(CHAIN_ID, [OPERATOR, ...accounts]);
  const rpc = new JsonRpc(await chain.listen());
  const deployed = await deployForServerDefaults(rpc, OPERATOR_KEY, OPERATOR);
  return { chain, rpc, deployed, contract: new SettlementContract(rpc, deployed.address) };
}

/** The config's settlement section for a server (or cluster role) on `dev`'s contract, read from its deployment block. */
export function settlementConfig(dev: DevSettlement, poll_ms: number): { settlement: Record<string, unknown> } {
  return {
    settlement: {
      contract: dev.deployed.address, chain_id: CHAIN_ID, poll_ms, start_block: Number(dev.deployed.receipt.blockNumber), rpc_url: dev.rpc.url,
    },
  };
}

/** `f`'s first non-null value, polled every 50 ms; null after `timeout_ms` (the caller asserts what it needs). */
export async function pollUntil<T>(timeout_ms: number, f: () => Promise<T | null>): Promise<T | null> {
  const deadline = Date.now() + timeout_ms;
  for (;;) {
    const v = await f();
    if (v !== null) return v;
    if (Date.now() > deadline) return null;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * `f`'s first value that is neither null nor false, polled every 50 ms (pollUntil); throws naming
 * `what` after `timeout_ms`, for the tests that cannot go on without it.
 */
export async function waitFor<T>(what: string, f: () => Promise<T | null | false>, timeout_ms = 20_000): Promise<T> {
  const v = await pollUntil(timeout_ms, async () => {
    const x = await f();
    return x === false ? null : x;
  });
  if (v === null) throw new Error(`timed out waiting for ${what}`);
  return v;
}
