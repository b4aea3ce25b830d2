// The chain link asks the sequencer for a batch again each round while a handled forced entry
// waits to be counted and every batch is posted (src/gateway/chain_link.ts postRoots): one request
// can be lost (a cluster's leader failing over, src/cluster/batch_request.ts), and before, the link
// asked once per refused entry only. It stops asking once the count is on chain. Real parts: the
// in-process EVM behind its JSON-RPC shim and the deployed Settlement contract; the link's matcher
// and DA store are stand-ins that count the requests and hold the batches' roots, so that the test
// decides when a batch comes (none: a request that was lost).
import { afterAll, describe, expect, it } from 'vitest';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import type { DaStore } from '../../src/da/da_store_contract.js';
import { ChainLink } from '../../src/gateway/chain_link.js';
import type { GatewayContext } from '../../src/gateway/context.js';
import { bytesToHex, Wallet } from '../server/harness.js';
import { CHAIN_ID, DevChain, devSettlement, OPERATOR_KEY } from './dev_chain.js';


let chain: DevChain | null = null;
afterAll(async () => {
  await chain?.close();
});

describe('the chain link asks for a batch each round while a refused entry waits to be counted', () => {
  it('asks every round with every batch posted, stops once the count is posted with the next batch\'s roots', async () => {
    const alice = Wallet.random();
    const dev = await devSettlement([alice.address]);
    chain = dev.chain;
    const { rpc, deployed, contract } = dev;
    // Queue entry 0: envelope nonce 2^53, valid on chain, refused by the front before the engine.
    const bytes = utf8ToBytes(JSON.stringify({ ...alice.cancelAll('ETH-USDC', { nonce: 5 }), kind: 'cancel_all' }));
    const nonce = 2n ** 53n;
    const message = `ringbook:force-include:${alice.address}:0x${bytesToHex(keccak_256(bytes))}:${nonce}`;
    await contract.send('0x' + bytesToHex(alice.priv), 'forceInclude', ['0x' + bytesToHex(bytes), nonce, alice.sign(message)]);

    // What the link reads of the exchange: no batch published yet (the contract's lastBatchId is 0).
    let asks = 0;
    const batches: string[] = [];
    const store = {
      latest: () => batches.length,
      get: (id: number) => (id >= 1 && id <= batches.length ? { header: { state_root: batches[id - 1], fills_root: batches[id - 1] } } : undefined),
    } as unknown as DaStore;
    const ctx = {
      link: {
        requestBatch: () => {
          asks++;
        },
        requests: { submit: () => null },
      },
      rm: { batch_id: 0, chain_deposit_high_water: 0, programmes: { entries: new Map() } },
      operator_key: OPERATOR_KEY,
    } as unknown as GatewayContext;
    const link = new ChainLink(ctx, store, {
      contract: deployed.address, chain_id: CHAIN_ID, rpc_url: rpc.url, poll_ms: 50,
      start_block: Number(deployed.receipt.blockNumber), logs_blocks_max: 1000, roots_per_tx_max: 64,
    });

    // Round 1: refused (asked once, as before); every batch posted, the entry waits: asked again.
    await link.poll();
    expect(link.status).toMatchObject({ forced_refused: 1, forced_submitted: 0, forced_processed: 0, last_error: null });
    expect(asks).toBe(2);
    // No batch came (the request lost): each round asks again.
    await link.poll();
    await link.poll();
    expect(asks).toBe(4);
    expect(await contract.readNumber('forcedProcessed')).toBe(0n);
    // A batch comes: its roots carry the count, and the link stops asking.
    batches.push('0x' + '11'.repeat(32));
    await link.poll();
    expect(await contract.readNumber('lastBatchId')).toBe(1n);
    expect(await contract.readNumber('forcedProcessed')).toBe(1n);
    expect(link.status.forced_processed).toBe(1);
    await link.poll();
    await link.poll();
    expect(asks).toBe(4);
    expect(link.status.last_error).toBeNull();
  }, 60_000);
});
