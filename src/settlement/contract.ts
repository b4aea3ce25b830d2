// The settlement contract from TypeScript: deployment and each call the server and the CLI make,
// over JsonRpc. Arguments and answers in the contract's own units (wei, token base units).
import { artifact } from './artifacts.js';
import { ContractAbi, type AbiArg } from './abi_codec.js';
import { JsonRpc, type RpcLog, type TxReceipt } from './rpc.js';

export const settlementAbi = (): ContractAbi => new ContractAbi(artifact('Settlement').abi);

export interface DeployedAsset {
  /** Token address (the zero address for ETH). */
  address: string;
  decimals: number;
}

/** Deploys a contract from the compiled artifacts; answers its address and the receipt. */
export async function deployContract(rpc: JsonRpc, key: string, name: string, args: readonly AbiArg[]): Promise<{ address: string; receipt: TxReceipt }> {
  const a = artifact(name);
  const abi = new ContractAbi(a.abi);
  const receipt = await rpc.sendAndWait(key, null, a.bytecode + abi.constructorArgs(args), 0n, abi);
  if (receipt.contractAddress === null) throw new Error(`deploying ${name}: no contract address in the receipt`);
  return { address: receipt.contractAddress.toLowerCase(), receipt };
}

export async function deploySettlement(rpc: JsonRpc, key: string, operator: string, assets: readonly DeployedAsset[]): Promise<{ address: string; receipt: TxReceipt }> {
  return deployContract(rpc, key, 'Settlement', [operator, assets.map((a) => a.address), assets.map((a) => a.decimals)]);
}

export interface DepositLog {
  deposit_id: number;
  user: string;
  asset: number;
  amount: bigint;
  units: number;
  block: number;
}

export interface ForcedLog {
  forced_id: number;
  user: string;
  nonce: number;
  payload: string;
  signature: string;
  block: number;
}

export class SettlementContract {
  readonly abi = settlementAbi();
  constructor(readonly rpc: JsonRpc, readonly address: string) {}

  async read(name: string, args: readonly AbiArg[] = []): Promise<AbiArg[]> {
    return this.abi.decodeResult(name, await this.rpc.ethCall(this.address, this.abi.call(name, args), null, 0n, this.abi));
  }

  async readNumber(name: string, args: readonly AbiArg[] = []): Promise<bigint> {
    return (await this.read(name, args))[0] as bigint;
  }

  send(key: string, name: string, args: readonly AbiArg[], value = 0n): Promise<TxReceipt> {
    return this.rpc.sendAndWait(key, this.address, this.abi.call(name, args), value, this.abi);
  }

  withdraw(key: string, user: string, asset: string, amount_wei: bigint, nonce: number | bigint, signature: string): Promise<TxReceipt> {
    return this.send(key, 'withdraw', [user, asset, amount_wei, nonce, signature]);
  }

  postRoots(key: string, first_batch_id: number, state_roots: readonly string[], fills_roots: readonly string[], forced_count: number): Promise<TxReceipt> {
    return this.send(key, 'postRoots', [first_batch_id, state_roots, fills_roots, forced_count]);
  }

  /** Deposit and ForcedQueued events of blocks [from, to], in chain order. */
  async events(from_block: number, to_block: number): Promise<{ deposits: DepositLog[]; forced: ForcedLog[] }> {
    const logs = await this.rpc.getLogs(this.address, from_block, to_block);
    const deposit_topic = this.topic('Deposit');
    const forced_topic = this.topic('ForcedQueued');
    const deposits: DepositLog[] = [];
    const forced: ForcedLog[] = [];
    for (const l of sortLogs(logs)) {
      if (l.topics[0] === deposit_topic) {
        const e = this.abi.decodeEvent('Deposit', l.topics, l.data);
        deposits.push({
          deposit_id: Number(e.depositId), user: e.user as string, asset: Number(e.asset), amount: e.amount as bigint,
          units: Number(e.units), block: Number(l.blockNumber),
        });
      } else if (l.topics[0] === forced_topic) {
        const e = this.abi.decodeEvent('ForcedQueued', l.topics, l.data);
        forced.push({
          forced_id: Number(e.forcedId), user: e.user as string, nonce: Number(e.nonce), payload: e.payload as string,
          signature: e.signature as string, block: Number(l.blockNumber),
        });
      }
    }
    return { deposits, forced };
  }

  private topic(name: string): string {
    return topicCache(this.abi, name);
  }
}

const topics = new Map<string, string>();
function topicCache(abi: ContractAbi, name: string): string {
  let t = topics.get(name);
  if (t === undefined) {
    t = abi.topicOf(name);
    topics.set(name, t);
  }
  return t;
}

function sortLogs(logs: RpcLog[]): RpcLog[] {
  return [...logs].sort((a, b) => Number(BigInt(a.blockNumber) - BigInt(b.blockNumber)) || Number(BigInt(a.logIndex) - BigInt(b.logIndex)));
}
