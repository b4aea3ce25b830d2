// The cluster's root poster (src/cluster/settlement_poster.ts), round by round: it posts the roots
// of its store with the forced count the gateways share, keeps the later batch of an entry shared
// twice, asks the leader for a batch each round while a shared entry waits uncounted with every
// batch posted, and refuses malformed shares. Real parts: the in-process EVM behind its JSON-RPC
// shim and the deployed Settlement contract, the poster's RootsPoster (the single process's code);
// the store and the NATS connection are stand-ins that hold the batches' roots and record what the
// poster publishes, so that the test decides when a batch comes.
import { afterAll, describe, expect, it } from 'vitest';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import type { MsgHdrs, NatsConnection } from '@nats-io/transport-node';
import { BATCH_REQUEST_SUBJECT, readBatchRequest } from '../../src/cluster/batch_request.js';
import { encodeForcedShare, readForcedShare, SettlementPoster } from '../../src/cluster/settlement_poster.js';
import { clusterSettings } from '../../src/cluster/roles.js';
import { bytesToHex, Wallet } from '../server/harness.js';
import { CHAIN_ID, DevChain, devSettlement, OPERATOR_KEY } from './dev_chain.js';


let chain: DevChain | null = null;
afterAll(async () => {
  await chain?.close();
});

const root = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32);

describe('the cluster\'s settlement root poster', () => {
  it('posts its roots with the shared forced count, asks for a batch each round while a shared entry waits', async () => {
    const alice = Wallet.random();
    const dev = await devSettlement([alice.address]);
    chain = dev.chain;
    const { rpc, deployed, contract } = dev;
    const key = '0x' + bytesToHex(alice.priv);
    const queue = async (n: bigint): Promise<void> => {
      const bytes = utf8ToBytes(JSON.stringify({ ...alice.cancelAll('ETH-USDC', { nonce: Number(n) }), kind: 'cancel_all' }));
      const message = `ringbook:force-include:${alice.address}:0x${bytesToHex(keccak_256(bytes))}:${n}`;
      await contract.send(key, 'forceInclude', ['0x' + bytesToHex(bytes), n, alice.sign(message)]);
    };
    await queue(2n ** 53n);
    await queue(2n ** 53n + 1n);

    const batches: number[] = [];
    const asks: (number | undefined)[] = [];
    const nc = {
      publish: (subject: string, _data: Uint8Array, opts?: { headers?: MsgHdrs }) => {
        expect(subject).toBe(BATCH_REQUEST_SUBJECT);
        asks.push(readBatchRequest(opts?.headers)?.after_batch_id);
      },
    } as unknown as NatsConnection;
    const poster = new SettlementPoster({
      nc, node_id: 'd1', operator_key: OPERATOR_KEY,
      settings: { contract: deployed.address, chain_id: CHAIN_ID, rpc_url: rpc.url, poll_ms: 50, start_block: 0, logs_blocks_max: 1000, roots_per_tx_max: 64 },
      roots: {
        latest: () => batches.length,
        get: (id) => (id >= 1 && id <= batches.length ? { header: { state_root: root(batches[id - 1]), fills_root: root(batches[id - 1] + 100) } } : undefined),
      },
    });

    // Nothing published, nothing shared: nothing posted, nothing asked.
    await poster.round();
    expect(poster.status).toMatchObject({ roots_posted_batch_id: 0, forced_processed: 0, batch_requests: 0, last_error: null });
    expect(asks).toEqual([]);

    // A gateway shares: entry 0 taken in by batch 1 (refused before the engine). No batch 1 yet:
    // asked every round (a request can be lost), after the last batch this role has.
    poster.heard(encodeForcedShare({ gateway: 'g1', from: 0, batches: [1] }));
    await poster.round();
    await poster.round();
    expect(asks).toEqual([0, 0]);

    // Entry 1 shared twice (two gateways, or one restarted): the later batch (3) is kept. Batch
    // ids past the one after this role's last batch are not taken yet (a far-future id would hold
    // its entry for ever): a gateway shares again each round, so these come again below.
    const share1 = encodeForcedShare({ gateway: 'g1', from: 1, batches: [3] });
    const share2 = encodeForcedShare({ gateway: 'g2', from: 0, batches: [1, 2] });
    poster.heard(share1);
    poster.heard(share2);
    expect(poster.status.share_entries_ignored).toBe(2);
    // Batches 1 and 2 come, the shares again: posted with the count of entry 0 only (entry 1's batch is 3).
    batches.push(1, 2);
    poster.heard(share1);
    poster.heard(share2);
    await poster.round();
    expect(await contract.readNumber('lastBatchId')).toBe(2n);
    expect(await contract.read('stateRoots', [2])).toEqual([root(2)]);
    expect(await contract.read('fillsRoots', [2])).toEqual([root(102)]);
    expect(await contract.readNumber('forcedProcessed')).toBe(1n);
    // Every batch posted, entry 1 waits for batch 3: asked again each round, after batch 2.
    await poster.round();
    expect(asks).toEqual([0, 0, 2]);
    batches.push(3);
    await poster.round();
    expect(await contract.readNumber('forcedProcessed')).toBe(2n);
    expect(poster.status).toMatchObject({
      roots_posted_batch_id: 3, forced_processed: 2, batch_requests: 3, postable_batch_id: 3, stopped_at_mismatch_batch_id: null, last_error: null,
    });
    // Counted: no more asking; a late share of counted entries changes nothing.
    poster.heard(encodeForcedShare({ gateway: 'g2', from: 0, batches: [1, 2] }));
    await poster.round();
    await poster.round();
    expect(asks).toEqual([0, 0, 2]);

    // Malformed shares and another version are refused (counted), never applied.
    poster.heard(Buffer.from('not json'));
    poster.heard(Buffer.from(JSON.stringify({ version: 1, gateway: 'g1', from: 2, batches: [] })));
    poster.heard(Buffer.from(JSON.stringify({ version: 1, gateway: 'bad name!', from: 2, batches: [4] })));
    poster.heard(Buffer.from(JSON.stringify({ version: 1, gateway: 'g1', from: -1, batches: [4] })));
    poster.heard(Buffer.from(JSON.stringify({ version: 2, gateway: 'g1', from: 2, batches: [4] })));
    expect(poster.status).toMatchObject({ shares_received: 11, shares_refused: 5 });
    expect(() => readForcedShare(Buffer.from(JSON.stringify({ version: 1, gateway: 'g1', from: 2, batches: new Array(513).fill(4) })))).toThrow(/1\.\.512/);
    expect(readForcedShare(encodeForcedShare({ gateway: 'g1', from: 7, batches: [4, 5] }))).toEqual({ gateway: 'g1', from: 7, batches: [4, 5] });
  }, 60_000);
});

describe('RINGBOOK_SETTLEMENT_POSTER', () => {
  it('is read for a DA role and refused on a gateway or matcher (only a DA role posts roots in a cluster)', () => {
    const env = (v: string | undefined): NodeJS.ProcessEnv => ({ RINGBOOK_NATS_URLS: 'nats://127.0.0.1:4222', RINGBOOK_SETTLEMENT_POSTER: v });
    expect(clusterSettings('da', env('1')).settlement_poster).toBe(true);
    expect(clusterSettings('da', env(undefined)).settlement_poster).toBe(false);
    expect(clusterSettings('gateway', env('0')).settlement_poster).toBe(false);
    expect(() => clusterSettings('gateway', env('1'))).toThrow(/DA role only/);
    expect(() => clusterSettings('matcher', env('1'))).toThrow(/DA role only/);
    expect(() => clusterSettings('da', env('2'))).toThrow(/RINGBOOK_SETTLEMENT_POSTER/);
  });
});
