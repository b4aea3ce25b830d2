// The chain link with a broken verify pool (src/gateway/chain_link.ts, signature_batcher.ts): a
// forced inclusion queued on chain cannot have its signatures checked, so the link retries it
// every polling round and never skips it (a skipped entry would let anyone freeze the contract
// 24 h later). Its failure is logged once, not once per round: the link's line once per message,
// the batcher's 'verify pool failed' once per change. Meanwhile the roots of new batches are still
// posted (without counting the entry), and after a restart with a working pool the entry is taken
// in and counted. Real parts: the in-process EVM behind its JSON-RPC shim, the deployed Settlement
// contract, a real server whose verify pool is broken by the dying fixture worker
// (test/auth/fixtures/verify_worker_dies_after.mjs), restarted on the same data directory.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SettlementContract } from '../../src/settlement/contract.js';
import { JsonRpc } from '../../src/settlement/rpc.js';
import { adminState, api, balances, bytesToHex, deposit, startServer, Wallet, type StartedServer } from '../server/harness.js';
import { CHAIN_ID, DevChain, deployForServerDefaults, OPERATOR, OPERATOR_KEY, waitFor } from './dev_chain.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const POLL_MS = 50;
const DIES_AFTER = fileURLToPath(new URL('../auth/fixtures/verify_worker_dies_after.mjs', import.meta.url));

const tempDir = tempDirsPerFile('ringbook-chain-pool-');
let chain: DevChain | null = null;
let s: StartedServer | null = null;
afterAll(async () => {
  // The chain and the files go whatever the server did; then its exit must have been clean.
  const stopped = await s?.stop();
  await chain?.close();
  if (stopped !== undefined) expect(stopped.code).toBe(0);
});

const lines = (text: string, part: string): string[] => text.split('\n').filter((l) => l.includes(part));

describe('the chain link with a broken verify pool', () => {
  it('retries a queued forced entry each round without skipping it, logs the failure once, and keeps posting roots', async () => {
    const alice = Wallet.random();
    chain = await DevChain.create(CHAIN_ID, [OPERATOR, alice.address]);
    const rpc = new JsonRpc(await chain.listen());
    const deployed = await deployForServerDefaults(rpc, OPERATOR_KEY, OPERATOR);
    const c = new SettlementContract(rpc, deployed.address);
    const dir = tempDir();
    const data_dir = path.join(dir, 'data');
    fs.mkdirSync(data_dir);
    const config = {
      verify: { inline_items_max: 0, steal_after_us: 0 },
      settlement: { contract: deployed.address, chain_id: CHAIN_ID, poll_ms: POLL_MS, start_block: Number(deployed.receipt.blockNumber), rpc_url: rpc.url },
    };
    s = await startServer({
      config,
      env: {
        RINGBOOK_DATA_DIR: data_dir,
        RINGBOOK_OPERATOR_KEY: OPERATOR_KEY,
        RINGBOOK_TEST_VERIFY_WORKER_FILE: DIES_AFTER,
        RINGBOOK_TEST_VERIFY_MARK_FILE: path.join(dir, 'first-worker'),
        RINGBOOK_TEST_VERIFY_DIES_AFTER_TASKS: '1',
        RINGBOOK_TEST_VERIFY_REPLACEMENT: 'broken',
      },
    });
    const srv = s;
    await waitFor('the verify workers serving', async () => {
      const p = (await adminState(srv)).verify_pool;
      return p.workers_ready === p.threads;
    });
    expect((await deposit(srv, alice.address, 'USDC', '1000')).status).toBe(200);
    // Signed orders until the first worker dies with one and its replacement cannot load.
    for (let i = 0; i < 20; i++) {
      const r = await api(srv.url).post('/orders', alice.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000, quantity: 100 }));
      if (r.status !== 200) break;
    }
    await waitFor('the verify pool broken', async () => (await adminState(srv)).verify_pool.broken !== null);
    const failed_before = lines(srv.output().stderr, 'ringbook: verify pool failed').length;
    expect(failed_before).toBeLessThanOrEqual(2);

    const payload = alice.cancelAll('ETH-USDC', { nonce: alice.nextNonce() + 1 });
    const env = alice.forceInclude({ ...payload, kind: 'cancel_all' }, { nonce: (payload.nonce as number) - 1 });
    await c.send('0x' + bytesToHex(alice.priv), 'forceInclude', [env.payload as string, env.nonce as number, env.signature as string]);
    await waitFor('the link failing on the forced entry', async () =>
      /could not check the signature/.test(String((await adminState(srv)).settlement.link?.last_error)));
    // At least 20 more rounds (poll_ms 50): the entry is still retried, never taken as processed.
    await new Promise((r) => setTimeout(r, 20 * POLL_MS + 500));
    const link = (await adminState(srv)).settlement.link;
    expect(link.last_error).toMatch(/could not check the signature/);
    expect(link.forced_submitted).toBe(0);
    expect(link.forced_processed).toBe(0);
    expect(await c.readNumber('forcedProcessed')).toBe(0n);

    // New batches (deposits need no signature check) still have their roots posted while the
    // entry waits: before, each round failed before posting, and roots stopped until a restart.
    const posted_before = Number(await c.readNumber('lastBatchId'));
    const batch_before = Number((await adminState(srv)).state_root_batch_id);
    for (let i = 0; i < 3; i++) expect((await deposit(srv, alice.address, 'USDC', '1')).status).toBe(200);
    const posted = await waitFor('the new batches\' roots posted on chain', async () => {
      const state = await adminState(srv);
      const on_chain = Number(await c.readNumber('lastBatchId'));
      return Number(state.state_root_batch_id) > batch_before && on_chain === Number(state.state_root_batch_id) ? on_chain : null;
    });
    expect(posted).toBeGreaterThan(posted_before);
    const h = (await api(srv.url).get(`/da/batches/${posted}`)).body.data.header;
    expect(await c.read('stateRoots', [posted])).toEqual([h.state_root]);
    // The entry is still waiting: not submitted, not counted on chain, still the link's error.
    const after = (await adminState(srv)).settlement.link;
    expect(after.last_error).toMatch(/could not check the signature/);
    expect(after.roots_posted_batch_id).toBe(posted);
    expect(after.forced_submitted).toBe(0);
    expect(after.forced_processed).toBe(0);
    expect(await c.readNumber('forcedProcessed')).toBe(0n);
    expect((await balances(srv, alice.address)).nonce_high_water).toBeLessThan(payload.nonce as number);
    // Logged once: the link's line and (at most one more) batcher line, not one a round.
    expect(lines(srv.output().stderr, 'ringbook: settlement link:')).toHaveLength(1);
    expect(lines(srv.output().stderr, 'ringbook: settlement link: the verify pool could not check')).toHaveLength(1);
    expect(lines(srv.output().stderr, 'ringbook: verify pool failed').length).toBeLessThanOrEqual(Math.max(failed_before, 1));
    expect((await s.stop()).code).toBe(0);
    s = null;

    // Restarted with a working pool on the same data: the entry the roots did not count is taken
    // in (the link starts at the contract's forcedProcessed, 0) and counted with the next roots.
    s = await startServer({ config, env: { RINGBOOK_DATA_DIR: data_dir, RINGBOOK_OPERATOR_KEY: OPERATOR_KEY } });
    const again = s;
    await waitFor('the forced entry counted on chain', async () => (await c.readNumber('forcedProcessed')) === 1n);
    expect((await balances(again, alice.address)).nonce_high_water).toBe(payload.nonce);
    expect(Number(await c.readNumber('lastBatchId'))).toBeGreaterThan(posted);
    expect((await s.stop()).code).toBe(0);
    s = null;
  }, 90_000);
});
