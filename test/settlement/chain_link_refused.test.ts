// A forced entry the front refuses outright, on an otherwise idle exchange (src/gateway/chain_link.ts):
// the contract takes an envelope nonce up to 2^64-1, the front only safe integers (DECISIONS,
// "Numbers"), so an entry queued with nonce 2^53 cannot go into the engine's inbox at all. It is
// processed at once, but its count travels only with roots, and with every batch already posted
// there were none to post: the entry stayed uncounted and, 24 h later, anyone could freeze the
// contract with challenge(id). The link now asks the sequencer for a batch, whose roots carry the
// count. A payload the front can read but the engine refuses (malformed: queued with its verdict,
// refused at inclusion) is guarded too. Real parts: the in-process EVM behind its JSON-RPC shim,
// the deployed Settlement contract, a real server with its chain link.
import { afterAll, describe, expect, it } from 'vitest';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { SettlementContract } from '../../src/settlement/contract.js';
import { JsonRpc } from '../../src/settlement/rpc.js';
import { adminState, bytesToHex, deposit, startServer, Wallet, type StartedServer } from '../server/harness.js';
import { CHAIN_ID, DevChain, deployForServerDefaults, OPERATOR, OPERATOR_KEY, pollUntil } from './dev_chain.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const POLL_MS = 50;
const DAY_S = 24 * 3600;

const tempDir = tempDirsPerFile('ringbook-chain-refused-');
let chain: DevChain | null = null;
let s: StartedServer | null = null;
afterAll(async () => {
  // The chain and the files go whatever the server did; then its exit must have been clean.
  const stopped = await s?.stop();
  await chain?.close();
  if (stopped !== undefined) expect(stopped.code).toBe(0);
});

describe('a forced entry the front refuses, on an idle exchange', () => {
  it('is counted on chain without any other batch, so challenge(id) cannot freeze the contract 24 h later', async () => {
    const alice = Wallet.random();
    const bob = Wallet.random();
    chain = await DevChain.create(CHAIN_ID, [OPERATOR, alice.address, bob.address]);
    const rpc = new JsonRpc(await chain.listen());
    const deployed = await deployForServerDefaults(rpc, OPERATOR_KEY, OPERATOR);
    const c = new SettlementContract(rpc, deployed.address);
    const dir = tempDir();
    s = await startServer({
      config: { settlement: { contract: deployed.address, chain_id: CHAIN_ID, poll_ms: POLL_MS, start_block: Number(deployed.receipt.blockNumber), rpc_url: rpc.url } },
      env: { RINGBOOK_DATA_DIR: dir, RINGBOOK_OPERATOR_KEY: OPERATOR_KEY },
    });
    const srv = s;
    const key = '0x' + bytesToHex(alice.priv);

    // One batch, its roots posted: from here on the exchange is idle and nothing waits to be posted.
    expect((await deposit(srv, alice.address, 'USDC', '1000')).status).toBe(200);
    const idle_batch = await pollUntil(20_000, async () => {
      const state = await adminState(srv);
      const on_chain = Number(await c.readNumber('lastBatchId'));
      return on_chain > 0 && on_chain === Number(state.state_root_batch_id) ? on_chain : null;
    });
    expect(idle_batch).not.toBeNull();

    // Queue entry 0: envelope nonce 2^53, valid on chain (uint64, the sender's signature over it),
    // refused by the front before the engine (not a safe integer).
    const payload = alice.cancelAll('ETH-USDC', { nonce: 5 });
    const bytes = utf8ToBytes(JSON.stringify({ ...payload, kind: 'cancel_all' }));
    const nonce = 2n ** 53n;
    const message = `ringbook:force-include:${alice.address}:0x${bytesToHex(keccak_256(bytes))}:${nonce}`;
    const r0 = await c.send(key, 'forceInclude', ['0x' + bytesToHex(bytes), nonce, alice.sign(message)]);
    const block0 = Number(r0.blockNumber);
    expect(await c.readNumber('forcedCount')).toBe(1n);
    // The link read past it (and handled it: its events did not stop there).
    expect(await pollUntil(20_000, async () => {
      const link = (await adminState(srv)).settlement.link;
      return link.block >= block0 && link.last_error === null ? true : null;
    })).toBe(true);
    expect((await adminState(srv)).settlement.link).toMatchObject({ forced_submitted: 0, forced_refused: 1 });
    // Counted with the roots of a batch the sequencer started for it (before the fix: never).
    const counted = await pollUntil(10_000, async () => ((await c.readNumber('forcedProcessed')) === 1n ? true : null));
    // 24 h later, nobody can freeze the contract over it.
    chain.increaseTime(DAY_S + 1);
    await expect(c.send('0x' + bytesToHex(bob.priv), 'challenge', [0])).rejects.toThrow(/NotOverdue/);
    expect(counted).toBe(true);
    expect(await c.read('frozen')).toEqual([false]);
    expect(Number(await c.readNumber('lastBatchId'))).toBeGreaterThan(idle_batch!);

    // Queue entry 1: a payload that is not JSON. The front queues it with its verdict, the engine
    // refuses it at inclusion (FORCED_PAYLOAD_MALFORMED) in a batch of its own: counted as well.
    const env = alice.forceInclude('not a request body', { nonce: alice.nextNonce() });
    await c.send(key, 'forceInclude', [env.payload as string, env.nonce as number, env.signature as string]);
    expect(await pollUntil(20_000, async () => ((await c.readNumber('forcedProcessed')) === 2n ? true : null))).toBe(true);
    chain.increaseTime(DAY_S + 1);
    await expect(c.send('0x' + bytesToHex(bob.priv), 'challenge', [1])).rejects.toThrow(/NotOverdue/);
    expect(await c.read('frozen')).toEqual([false]);
    // The link's own status follows once its postRoots receipt is back.
    const link = await pollUntil(20_000, async () => {
      const l = (await adminState(srv)).settlement.link;
      return l.forced_processed === 2 ? l : null;
    });
    expect(link).not.toBeNull();
    expect(link.forced_submitted).toBe(1);
    expect(link.forced_refused).toBe(1);
    expect(link.forced_processed).toBe(2);
    expect(link.last_error).toBeNull();

    expect((await s.stop()).code).toBe(0);
    s = null;
  }, 90_000);
});
