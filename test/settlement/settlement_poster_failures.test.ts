// The cluster's settlement root poster (src/cluster/settlement_poster.ts) where things go wrong:
// a batch whose roots differ from the leader's header (nothing from it on is posted), hostile or
// odd `rb.settlement.forced` shares (bounded, never able to hold an entry uncounted for ever), the
// RPC endpoint down, a batch missing from the store, another poster's transaction first, a
// restart on the same store, and the poster lease (a standby, a lease lapsed before a transaction). Real parts: the in-process EVM behind its JSON-RPC shim, the deployed
// Settlement contract, RootsPoster and LeaderCheckedRoots (what the DA role wires); the store and
// the NATS connection are stand-ins, so that the test decides when a batch comes and what it holds.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { LeaderCheckedRoots, type BatchRootsPair } from '../../src/cluster/checked_roots.js';
import {
  encodeForcedShare, FORCED_SHARE_BYTES_MAX, FORCED_WINDOW_ENTRIES, readForcedShare, SettlementPoster, type PosterLease,
} from '../../src/cluster/settlement_poster.js';
import type { RootsSource } from '../../src/settlement/roots_poster.js';
import { SettlementContract } from '../../src/settlement/contract.js';
import { JsonRpc } from '../../src/settlement/rpc.js';
import { ComponentLog } from '../../src/util/log.js';
import { bytesToHex, Wallet } from '../server/harness.js';
import { CHAIN_ID, DevChain, deployForServerDefaults, OPERATOR, OPERATOR_KEY } from './dev_chain.js';

const chains: DevChain[] = [];
const servers: http.Server[] = [];
afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  for (const c of chains) await c.close();
});

const hex = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32);
const rootsOf = (b: number): BatchRootsPair => ({ state_root: hex(b), fills_root: hex(b + 100) });

/** A stand-in DA store: batch id -> its header's roots. */
class Store {
  readonly batches = new Map<number, BatchRootsPair>();
  onGet: (id: number) => void = () => {};
  latest(): number {
    return this.batches.size;
  }
  get(id: number): { header: BatchRootsPair } | undefined {
    this.onGet(id);
    const h = this.batches.get(id);
    return h === undefined ? undefined : { header: h };
  }
}

const alice = Wallet.random();

/** A forced-inclusion entry from alice on the contract's queue. */
async function queueForced(contract: SettlementContract): Promise<void> {
  const n = BigInt(Date.now());
  const bytes = utf8ToBytes(JSON.stringify({ ...alice.cancelAll('ETH-USDC', { nonce: Number(n) }), kind: 'cancel_all' }));
  const message = `ringbook:force-include:${alice.address}:0x${bytesToHex(keccak_256(bytes))}:${n}`;
  await contract.send('0x' + bytesToHex(alice.priv), 'forceInclude', ['0x' + bytesToHex(bytes), n, alice.sign(message)]);
}

async function setUp(): Promise<{ rpc: JsonRpc; contract: SettlementContract; address: string; asks: number[]; nc: NatsConnection }> {
  const chain = await DevChain.create(CHAIN_ID, [OPERATOR, alice.address]);
  chains.push(chain);
  const rpc = new JsonRpc(await chain.listen());
  const deployed = await deployForServerDefaults(rpc, OPERATOR_KEY, OPERATOR);
  const asks: number[] = [];
  const nc = { publish: () => asks.push(1) } as unknown as NatsConnection;
  return { rpc, contract: new SettlementContract(rpc, deployed.address), address: deployed.address, asks, nc };
}

/** An HTTP proxy to `upstream` that holds each request until `gate()` settles (closed after the tests). */
async function gatedProxy(upstream: string, gate: () => Promise<unknown>): Promise<{ url: string }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        await gate().catch(() => undefined);
        const r = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
        res.writeHead(r.status, { 'content-type': 'application/json' });
        res.end(Buffer.from(await r.arrayBuffer()));
      })().catch(() => res.destroy());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function posterOn(o: { rpc_url: string; address: string; nc: NatsConnection; roots: RootsSource; lease?: PosterLease }): SettlementPoster {
  return new SettlementPoster({
    nc: o.nc, node_id: 'd1', operator_key: OPERATOR_KEY, roots: o.roots, lease: o.lease,
    settings: { contract: o.address, chain_id: CHAIN_ID, rpc_url: o.rpc_url, poll_ms: 50, start_block: 0, logs_blocks_max: 1000, roots_per_tx_max: 64 },
  });
}

describe('the settlement poster and the leader\'s roots', () => {
  it('posts nothing from the first batch whose roots differed from the leader\'s header on, nor asks for batches', async () => {
    const { rpc, contract, address, nc, asks } = await setUp();
    const store = new Store();
    const checked = new LeaderCheckedRoots(store);
    const poster = posterOn({ rpc_url: rpc.url, address, nc, roots: checked });
    // Genesis, then batches 1..2 as the leader published them.
    expect(checked.check(0, rootsOf(0), hex(0))).toBe(true);
    for (const b of [1, 2]) {
      store.batches.set(b, rootsOf(b));
      expect(checked.check(b, rootsOf(b), hex(b))).toBe(true);
    }
    await poster.round();
    expect(await contract.readNumber('lastBatchId')).toBe(2n);
    expect(poster.status).toMatchObject({ roots_posted_batch_id: 2, postable_batch_id: 2, stopped_at_mismatch_batch_id: null });
    // Batch 3: this role computed another fills root than the leader's header says.
    store.batches.set(3, { state_root: hex(3), fills_root: hex(77) });
    expect(checked.check(3, rootsOf(3), hex(3))).toBe(false);
    // Batches 4 and 5 agree again, but come after the mismatch.
    for (const b of [4, 5]) {
      store.batches.set(b, rootsOf(b));
      expect(checked.check(b, rootsOf(b), hex(b))).toBe(true);
    }
    // The stop shows in GET /status `settlement` and is logged once at error level, not each round.
    const errors = vi.spyOn(ComponentLog.prototype, 'error');
    try {
      await poster.round();
      await poster.round();
      await poster.round();
      const stops = errors.mock.calls.filter(([msg]) => msg.includes('settlement poster: stopped at batch 3'));
      expect(stops.length).toBe(1);
    } finally {
      errors.mockRestore();
    }
    expect(await contract.readNumber('lastBatchId')).toBe(2n);
    expect(checked.latest()).toBe(2);
    expect(checked.get(4)).toBeUndefined();
    expect(poster.status).toMatchObject({ roots_posted_batch_id: 2, postable_batch_id: 2, stopped_at_mismatch_batch_id: 3, last_error: null });
    // A forced entry the leader took in batch 3 now waits uncounted. Before the stop this poster
    // would ask the leader for a batch every round; after it, no batch could carry the count
    // (nothing past batch 2 is posted), so it asks for none.
    await queueForced(contract);
    poster.heard(encodeForcedShare({ gateway: 'g1', from: 0, batches: [3] }));
    expect(poster.status.forced_remembered).toBe(1);
    asks.length = 0;
    for (let i = 0; i < 3; i++) await poster.round();
    expect(asks.length).toBe(0);
    expect(poster.status).toMatchObject({ batch_requests: 0, stopped_at_mismatch_batch_id: 3, last_error: null });
  }, 60_000);

  it('compares the stored roots it posts, not only the recomputed state root (a restart over an earlier run\'s store)', () => {
    const store = new Store();
    const checked = new LeaderCheckedRoots(store);
    checked.check(0, rootsOf(0), hex(0));
    store.batches.set(1, rootsOf(1));
    checked.check(1, rootsOf(1), hex(1));
    // The store's header of batch 2 (an earlier run) differs; the root recomputed now agrees.
    store.batches.set(2, { state_root: hex(66), fills_root: hex(102) });
    expect(checked.check(2, rootsOf(2), hex(2))).toBe(false);
    // No state root for batch 3 (the publisher failed): a mismatch too, and a gap after it.
    expect(checked.check(3, rootsOf(3), null)).toBe(false);
    expect(checked.latest()).toBe(1);
    expect(checked.first_mismatch).toBe(2);
  });
});

describe('rb.settlement.forced as hostile input', () => {
  it('a far-future batch id cannot hold an entry uncounted; memory stays within the window; bodies are bounded', async () => {
    const { rpc, contract, address, nc, asks } = await setUp();
    const store = new Store();
    const poster = posterOn({ rpc_url: rpc.url, address, nc, roots: store });
    // Before the contract's count is read: nothing is remembered.
    poster.heard(encodeForcedShare({ gateway: 'g1', from: 0, batches: [1] }));
    expect(poster.status).toMatchObject({ share_entries_ignored: 1, forced_remembered: 0 });
    await poster.round();
    // A share of an entry the contract's queue does not hold: counting it would revert every
    // postRoots (BadForcedCount); the roots go on chain with the count the queue allows, and no
    // batch is asked for it.
    poster.heard(encodeForcedShare({ gateway: 'evil', from: 0, batches: [1] }));
    store.batches.set(1, rootsOf(1));
    await poster.round();
    await poster.round();
    await poster.round();
    expect(poster.status.last_error).toBeNull();
    expect(await contract.readNumber('lastBatchId')).toBe(1n);
    expect(await contract.readNumber('forcedProcessed')).toBe(0n);
    expect(asks).toEqual([]);
    // Entry 0 queued on chain. A peer claims batch 10^12 took it in: not taken (the batch after
    // this role's last is 2), so the honest share (batch 2) counts it with batch 2's roots.
    await queueForced(contract);
    poster.heard(encodeForcedShare({ gateway: 'evil', from: 0, batches: [1e12] }));
    poster.heard(encodeForcedShare({ gateway: 'g1', from: 0, batches: [2] }));
    store.batches.set(2, rootsOf(2));
    await poster.round();
    expect(await contract.readNumber('lastBatchId')).toBe(2n);
    expect(await contract.readNumber('forcedProcessed')).toBe(1n);
    // A flood of shares over ever later queue ids: at most the window is remembered.
    for (let k = 0; k < 200; k++) {
      poster.heard(encodeForcedShare({ gateway: 'evil', from: 1 + k * 512, batches: new Array<number>(512).fill(2) }));
    }
    expect(poster.status.forced_remembered).toBeLessThanOrEqual(FORCED_WINDOW_ENTRIES);
    expect(poster.status.forced_remembered).toBeGreaterThan(0);
    // Bodies: a well-formed share padded past the bound, an array, numbers past 2^53, negative or
    // fractional batch ids: refused.
    const padded = Buffer.from(JSON.stringify({ version: 1, gateway: 'g1', from: 1, batches: [2], pad: 'x'.repeat(FORCED_SHARE_BYTES_MAX) }));
    expect(() => readForcedShare(padded)).toThrow(/bytes/);
    expect(() => readForcedShare(Buffer.from('[1,2]'))).toThrow(/not an object/);
    for (const bad of ['{"version":1,"gateway":"g1","from":9007199254740993,"batches":[2]}',
      '{"version":1,"gateway":"g1","from":1,"batches":[9007199254740993]}',
      '{"version":1,"gateway":"g1","from":1,"batches":[-2]}', '{"version":1,"gateway":"g1","from":1,"batches":[1.5]}',
      '{"version":1,"gateway":"g1","from":1.5,"batches":[2]}', '{"version":1,"gateway":"g1","from":9007199254740990,"batches":[2,2]}']) {
      expect(() => readForcedShare(Buffer.from(bad)), bad).toThrow(/forced share/);
    }
    const refused = poster.status.shares_refused;
    poster.heard(padded);
    expect(poster.status.shares_refused).toBe(refused + 1);
  }, 60_000);
});

describe('the settlement poster\'s failure paths', () => {
  it('RPC down, a batch missing from the store, another poster first, a restart on its store', async () => {
    const { rpc, contract, address, nc } = await setUp();
    // The endpoint down: the round fails softly (status), nothing is thrown.
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const down = posterOn({ rpc_url: `http://127.0.0.1:${port}`, address, nc, roots: new Store() });
    await down.round();
    await down.round();
    expect(down.status.last_error).toMatch(/fetch failed|ECONNREFUSED/);
    expect(down.status.roots_posted_batch_id).toBe(-1);

    // Batch 2 missing from the store: no transaction (the range is all or nothing), then posted once it is there.
    const store = new Store();
    for (const b of [1, 3]) store.batches.set(b, rootsOf(b));
    const poster = posterOn({ rpc_url: rpc.url, address, nc, roots: { latest: () => 3, get: (id) => store.get(id) } });
    await poster.round();
    expect(poster.status.last_error).toMatch(/batch 2 missing/);
    expect(await contract.readNumber('lastBatchId')).toBe(0n);
    store.batches.set(2, rootsOf(2));
    await poster.round();
    expect(poster.status.last_error).toBeNull();
    expect(await contract.readNumber('lastBatchId')).toBe(3n);

    // Another poster posts batch 4 between this one's read of lastBatchId and its transaction
    // (this one's RPC calls wait behind a gate until the other's transaction is mined): this one's
    // transaction reverts; the next round reads the contract again and posts batch 5 only.
    store.batches.set(4, rootsOf(4));
    const other = new SettlementContract(rpc, address);
    let raced: Promise<unknown> | null = null;
    store.onGet = (id) => {
      if (id === 4 && raced === null) raced = other.postRoots(OPERATOR_KEY, 4, [hex(4)], [hex(104)], 0);
    };
    const gated = await gatedProxy(rpc.url, () => raced ?? Promise.resolve());
    const second = posterOn({ rpc_url: gated.url, address, nc, roots: { latest: () => store.latest(), get: (id) => store.get(id) } });
    await second.round();
    await raced;
    expect(await contract.readNumber('lastBatchId')).toBe(4n);
    expect(await contract.read('stateRoots', [4])).toEqual([hex(4)]);
    expect(second.status.last_error).toMatch(/BadBatchRange/);
    store.onGet = () => {};
    store.batches.set(5, rootsOf(5));
    await second.round();
    expect(second.status).toMatchObject({ roots_posted_batch_id: 5, last_error: null });
    expect(await contract.read('stateRoots', [5])).toEqual([hex(5)]);

    // A restart on the same store: it resumes at the contract's lastBatchId (no transaction for
    // batches already posted: the block number does not move), then posts the next batch.
    const restarted = posterOn({ rpc_url: rpc.url, address, nc, roots: { latest: () => store.latest(), get: (id) => store.get(id) } });
    const block = await rpc.blockNumber();
    await restarted.round();
    expect(await rpc.blockNumber()).toBe(block);
    expect(restarted.status).toMatchObject({ roots_posted_batch_id: 5, forced_processed: 0, last_error: null });
    store.batches.set(6, rootsOf(6));
    await restarted.round();
    expect(await contract.readNumber('lastBatchId')).toBe(6n);
    expect(await contract.read('stateRoots', [6])).toEqual([hex(6)]);
  }, 60_000);

  it('without the poster lease: a standby sends nothing and takes no share; a lease lapsed after the reads sends no transaction', async () => {
    const { rpc, contract, address, nc, asks } = await setUp();
    const store = new Store();
    for (const b of [1, 2]) store.batches.set(b, rootsOf(b));
    const lease = {
      valid: false, takeovers: 0, holding(): boolean { return this.valid; }, withdraw: () => Promise.resolve(), rejoin: () => undefined,
    };
    const poster = posterOn({ rpc_url: rpc.url, address, nc, roots: store, lease });
    // A standby: no transaction, no read of the contract, no share taken (nor counted as ignored).
    const block = await rpc.blockNumber();
    await poster.round();
    poster.heard(encodeForcedShare({ gateway: 'g1', from: 0, batches: [1] }));
    expect(await rpc.blockNumber()).toBe(block);
    expect(poster.status).toMatchObject({
      poster_lease: 'standby', poster_takeovers: 0, roots_posted_batch_id: -1, postable_batch_id: 2, shares_received: 1,
      share_entries_ignored: 0, forced_remembered: 0, last_error: null,
    });
    // It takes the lease; its validity lapses while the round reads the store (after lastBatchId
    // and before the transaction): it sends none.
    lease.valid = true;
    lease.takeovers = 1;
    store.onGet = () => {
      lease.valid = false;
    };
    await poster.round();
    expect(await rpc.blockNumber()).toBe(block);
    expect(await contract.readNumber('lastBatchId')).toBe(0n);
    expect(poster.status).toMatchObject({ poster_lease: 'held', poster_takeovers: 1, roots_posted_batch_id: 0, last_error: null });
    // Valid again (a late renewal confirmed): it posts from the contract's lastBatchId.
    store.onGet = () => {};
    lease.valid = true;
    await poster.round();
    expect(await contract.readNumber('lastBatchId')).toBe(2n);
    expect(poster.status).toMatchObject({ poster_lease: 'held', roots_posted_batch_id: 2, last_error: null });
    expect(asks).toEqual([]);
  }, 60_000);
});
