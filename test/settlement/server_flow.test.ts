// The settlement contract with the real server, in the in-process EVM behind the JSON-RPC shim:
// on-chain deposit -> the server's chain watcher credits it (once, across a restart) -> trade ->
// POST /withdrawals -> POST /withdrawal-signature -> `ringbook withdraw-onchain` pays exactly
// once; the server posts every published batch's roots; a forced inclusion queued on chain is
// taken in; then the operator disappears, a forced payload waits 24 h (the EVM clock moved), a
// challenge freezes the contract and `ringbook escape` pays each user their proven balance once.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ETH_ASSET_ADDRESS } from '../../src/auth/withdrawal.js';
import { ContractAbi } from '../../src/settlement/abi_codec.js';
import { artifact } from '../../src/settlement/artifacts.js';
import { deployContract, SettlementContract } from '../../src/settlement/contract.js';
import { JsonRpc, RevertError } from '../../src/settlement/rpc.js';
import { adminState, api, balances, bytesToHex, runScript, startServer, Wallet, type StartedServer } from '../server/harness.js';
import { CHAIN_ID, DevChain, OPERATOR, OPERATOR_KEY, waitFor } from './dev_chain.js';

const GAS_PRICE = 1_000_000_000n;
const ETH = 10n ** 18n;
const USDC = 10n ** 6n;

let chain: DevChain;
let rpc: JsonRpc;
let c: SettlementContract;
let token: ContractAbi;
let usdc: string;
let data_dir: string;
let config: Record<string, unknown>;
let s: StartedServer | null = null;
const alice = Wallet.random();
const bob = Wallet.random();
const keyOf = (w: Wallet): string => '0x' + bytesToHex(w.priv);

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runScript('src/cli/ringbook.js', [...args, '--json'], { RINGBOOK_CONFIG: path.join(data_dir, 'chain-config.json') });
}

async function tokenBalance(who: string): Promise<bigint> {
  return token.decodeResult('balanceOf', await rpc.ethCall(usdc, token.call('balanceOf', [who])))[0] as bigint;
}

async function start(with_chain: boolean, rpc_url = rpc.url): Promise<StartedServer> {
  const settlement = { ...(config.settlement as Record<string, unknown>), rpc_url: with_chain ? rpc_url : null };
  s = await startServer({ config: { ...config, settlement }, env: { RINGBOOK_DATA_DIR: data_dir, RINGBOOK_OPERATOR_KEY: OPERATOR_KEY } });
  return s;
}

async function stop(): Promise<void> {
  const r = await s?.stop();
  s = null;
  if (r !== undefined) expect(r.code).toBe(0);
}

beforeAll(async () => {
  data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-chain-'));
  chain = await DevChain.create(CHAIN_ID, [OPERATOR, alice.address, bob.address]);
  rpc = new JsonRpc(await chain.listen());
  token = new ContractAbi(artifact('TestToken').abi);
  usdc = (await deployContract(rpc, OPERATOR_KEY, 'TestToken', ['Test USD', 'USDC', 6])).address;
  const btc = (await deployContract(rpc, OPERATOR_KEY, 'TestToken', ['Test BTC', 'BTC', 8])).address;
  await rpc.sendAndWait(OPERATOR_KEY, usdc, token.call('mint', [bob.address, 10_000n * USDC]));
  const assets = [
    { symbol: 'ETH', token_address: ETH_ASSET_ADDRESS, onchain_decimals: 18 },
    { symbol: 'BTC', token_address: btc, onchain_decimals: 8 },
    { symbol: 'USDC', token_address: usdc, onchain_decimals: 6 },
  ];
  const chain_config = { assets, settlement: { contract: '0x' + '00'.repeat(20), chain_id: CHAIN_ID, rpc_url: rpc.url } };
  fs.writeFileSync(path.join(data_dir, 'chain-config.json'), JSON.stringify(chain_config));
  // Deployed with the CLI, as an operator would.
  const d = await cli(['contract', 'deploy', '--key', OPERATOR_KEY]);
  expect(d.stderr).toBe('');
  const deployed = JSON.parse(d.stdout) as { contract: string; block: number; operator: string };
  expect(deployed.operator).toBe(OPERATOR);
  c = new SettlementContract(rpc, deployed.contract);
  config = { assets, settlement: { contract: deployed.contract, chain_id: CHAIN_ID, poll_ms: 50, start_block: deployed.block } };
  fs.writeFileSync(path.join(data_dir, 'chain-config.json'), JSON.stringify({ ...config, settlement: { ...config.settlement as object, rpc_url: rpc.url } }));
}, 120_000);

afterAll(async () => {
  // The chain and the files go whatever the server did; then its exit must have been clean.
  const stopped = await s?.stop();
  await chain?.close();
  fs.rmSync(data_dir, { recursive: true, force: true });
  if (stopped !== undefined) expect(stopped.code).toBe(0);
});

describe('the settlement contract with the server', () => {
  let withdrawal_nonce = 0;

  it('deposit on chain -> engine credit -> trade -> POST /withdrawals -> signature -> on-chain withdrawal, exactly once', async () => {
    const srv = await start(true);
    await c.send(keyOf(alice), 'depositEth', [], 2n * ETH);
    await rpc.sendAndWait(keyOf(bob), usdc, token.call('approve', [c.address, 10_000n * USDC]));
    await c.send(keyOf(bob), 'depositToken', [usdc, 10_000n * USDC]);
    await waitFor('both deposits credited', async () => {
      const [a, b] = [await balances(srv, alice.address), await balances(srv, bob.address)];
      return a.ETH?.available === 2_000_000 && b.USDC?.available === 10_000_000_000;
    });
    // Alice sells 1 ETH to Bob at 2000 (maker rebate 1 bp, taker fee 5 bp).
    const a = api(srv.url);
    expect((await a.post('/orders', alice.order({ market_id: 'ETH-USDC', side: 'ask', price: 2_000_000_000, quantity: 1_000_000 }))).status).toBe(200);
    expect((await a.post('/orders', bob.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 1_000_000 }))).status).toBe(200);
    const w = bob.withdraw('ETH', '500000000000000000');
    withdrawal_nonce = w.nonce as number;
    expect((await a.post('/withdrawals', w)).status).toBe(200);
    expect(await balances(srv, bob.address)).toMatchObject({ ETH: { available: 500_000, locked: 0 }, USDC: { available: 7_999_000_000, locked: 0 } });
    const before = await rpc.balance(bob.address);
    const r = await cli(['withdraw-onchain', '--key', keyOf(bob), '--asset', 'ETH', '--amount', '0.5', '--nonce', String(withdrawal_nonce), '--url', srv.url]);
    expect(r.code, r.stderr).toBe(0);
    const paid = JSON.parse(r.stdout) as { amount_wei: string; gas_used: number };
    expect(paid.amount_wei).toBe(String(ETH / 2n));
    expect((await rpc.balance(bob.address)) - before + BigInt(paid.gas_used) * GAS_PRICE).toBe(ETH / 2n);
    // The same signature again: refused on chain, nothing paid.
    const sig = (await a.post('/withdrawal-signature', { user: bob.address, asset: 'ETH', amount: '0.5', nonce: withdrawal_nonce })).body.data.signature as string;
    await expect(c.withdraw(keyOf(alice), bob.address, ETH_ASSET_ADDRESS, ETH / 2n, withdrawal_nonce, sig)).rejects.toThrow(/AlreadyWithdrawn/);
    const again = await cli(['withdraw-onchain', '--key', keyOf(bob), '--asset', 'ETH', '--amount', '0.5', '--nonce', String(withdrawal_nonce), '--signature', sig]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: false, error: 'AlreadyWithdrawn' });
    expect(await rpc.balance(c.address)).toBe(ETH * 3n / 2n);
  }, 60_000);

  it('posts every published batch\'s state and fills roots', async () => {
    const srv = s!;
    const st = await waitFor('roots posted up to the published batch', async () => {
      const state = await adminState(srv);
      const posted = Number(await c.readNumber('lastBatchId'));
      return posted > 0 && String(posted) === state.state_root_batch_id ? state : null;
    });
    const last = Number(st.state_root_batch_id);
    for (const id of [1, last]) {
      const h = (await api(srv.url).get(`/da/batches/${id}`)).body.data.header;
      expect(await c.read('stateRoots', [id])).toEqual([h.state_root]);
      expect(await c.read('fillsRoots', [id])).toEqual([h.fills_root]);
    }
    // The fill of the trade proves on chain against its posted fills root.
    const fills = (await api(srv.url).get(`/account/${bob.address}/fills`)).body.data;
    const order_id = (fills.fills ?? fills)[0].order_id as number;
    const p = (await api(srv.url).get(`/orders/${order_id}/da-proof`)).body.data;
    const { encodeFillLeaf, fillLeafFromValues } = await import('../../src/da/fills_tree.js');
    const leaf = '0x' + Buffer.from(encodeFillLeaf(fillLeafFromValues(p.leaf))).toString('hex');
    expect(await c.read('verifyFill', [Number(p.batch_id), leaf, p.merkle_proof])).toEqual([true]);
    expect(await c.read('verifyFill', [Number(p.batch_id) + 1, leaf, p.merkle_proof])).toEqual([false]);
    expect(st.settlement.link).toMatchObject({ deposits_credited: 2, last_error: null });
  }, 60_000);

  it('signs a withdrawal only once its batch root is posted; credits each chain deposit once across restarts', async () => {
    await stop();
    // The chain endpoint unreachable: nothing is credited or posted, and a new withdrawal gets
    // no operator signature (its batch is in no posted root).
    let srv = await start(true, 'http://127.0.0.1:9');
    const w = bob.withdraw('USDC', '10000000');
    expect((await api(srv.url).post('/withdrawals', w)).status).toBe(200);
    const refused = await api(srv.url).post('/withdrawal-signature', { user: bob.address, asset: 'USDC', amount: '10', nonce: w.nonce });
    expect(refused.status).toBe(404);
    expect(refused.body.message).toMatch(/^no signature yet: the withdrawal's batch \d+ is not in a root posted on chain \(posted up to -1\)/);
    expect((await adminState(srv)).settlement.link.last_error).not.toBeNull();
    await stop();
    srv = await start(true);
    // A deposit made while the server restarts, and one after: each credited once.
    await c.send(keyOf(alice), 'depositEth', [], ETH / 10n);
    await waitFor('the watcher past the new deposit', async () => {
      const st = await adminState(srv);
      return st.settlement.link.block >= (await rpc.blockNumber()) && (await balances(srv, alice.address)).ETH.available === 1_100_000;
    });
    // No second credit: not a 300 ms sleep but a barrier. A transaction with no deposit in it
    // mines a later block; the link credits a round's deposits (each answered, so committed)
    // before it moves its block past them, so once it reads past that block, a round after the
    // deposit's has ended and any repeated credit would show in the count and the balance.
    const later = await rpc.sendAndWait(keyOf(alice), usdc, token.call('approve', [OPERATOR, 0n]));
    await waitFor('the watcher past a later block', async () => (await adminState(srv)).settlement.link.block >= Number(later.blockNumber));
    const st = await adminState(srv);
    expect(st.settlement.link.deposits_credited).toBe(1);
    expect((await balances(srv, alice.address)).ETH).toEqual({ available: 1_100_000, locked: 0 });
    expect((await balances(srv, bob.address)).USDC).toEqual({ available: 7_989_000_000, locked: 0 });
    // With the link back, the root is posted and the signature comes: paid on chain once.
    const sig = await waitFor('the withdrawal signature', async () => {
      const r = await api(srv.url).post('/withdrawal-signature', { user: bob.address, asset: 'USDC', amount: '10', nonce: w.nonce });
      return r.status === 200 ? r.body.data.signature as string : null;
    });
    await c.withdraw(keyOf(alice), bob.address, usdc, 10_000_000n, w.nonce as number, sig);
    expect(await tokenBalance(bob.address)).toBe(10_000_000n);
  }, 90_000);

  it('a forced inclusion queued on chain enters the engine and the contract learns it was taken in', async () => {
    const srv = s!;
    const payload = alice.cancelAll('ETH-USDC', { nonce: alice.nextNonce() + 1 });
    const env = alice.forceInclude({ ...payload, kind: 'cancel_all' }, { nonce: (payload.nonce as number) - 1 });
    await c.send(keyOf(alice), 'forceInclude', [env.payload as string, env.nonce as number, env.signature as string]);
    await waitFor('the forced entry counted as processed on chain', async () => (await c.readNumber('forcedProcessed')) === 1n);
    expect((await balances(srv, alice.address)).nonce_high_water).toBe(payload.nonce);
    await expect(c.send(keyOf(bob), 'challenge', [0])).rejects.toThrow(/NotOverdue/);
  }, 60_000);

  it('operator gone: a forced payload waits 24 h, a challenge freezes, each user escapes their proven balance once', async () => {
    const before_stop = await adminState(s!);
    const expected: Record<string, { ETH: number; USDC: number }> = {};
    for (const w of [alice, bob]) {
      const b = await balances(s!, w.address);
      expected[w.address] = { ETH: b.ETH.available + b.ETH.locked, USDC: b.USDC.available + b.USDC.locked };
    }
    await waitFor('last roots posted', async () => String(await c.readNumber('lastBatchId')) === (await adminState(s!)).state_root_batch_id);
    await stop();
    // The DA data stays public (a mirror): the same data dir served without the chain link.
    const mirror = await start(false);
    const payload = bob.cancelAll(undefined, { nonce: bob.nextNonce() + 1 });
    const env = bob.forceInclude(payload, { nonce: (payload.nonce as number) - 1 });
    await c.send(keyOf(bob), 'forceInclude', [env.payload as string, env.nonce as number, env.signature as string]);
    await expect(c.send(keyOf(alice), 'challenge', [1])).rejects.toThrow(/NotOverdue/);
    chain.increaseTime(24 * 3600 + 1);
    await c.send(keyOf(alice), 'challenge', [1]);
    expect(await c.read('frozen')).toEqual([true]);
    expect(Number(before_stop.batch_id)).toBeGreaterThanOrEqual(Number(await c.readNumber('lastBatchId')));
    const holdings_eth = await rpc.balance(c.address);
    const holdings_usdc = await tokenBalance(c.address);
    let paid_eth = 0n;
    let paid_usdc = 0n;
    for (const w of [alice, bob]) {
      const eth0 = await rpc.balance(w.address);
      const usdc0 = await tokenBalance(w.address);
      const r = await cli(['escape', '--key', keyOf(w), '--url', mirror.url]);
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as { paid: { asset: number; kind: string; amount: string; gas_used: number }[]; already_paid: number };
      const gas = report.paid.reduce((g, p) => g + BigInt(p.gas_used), 0n) * GAS_PRICE;
      const got_eth = (await rpc.balance(w.address)) - eth0 + gas;
      const got_usdc = (await tokenBalance(w.address)) - usdc0;
      expect(got_eth).toBe(BigInt(expected[w.address].ETH) * 10n ** 12n);
      expect(got_usdc).toBe(BigInt(expected[w.address].USDC));
      paid_eth += got_eth;
      paid_usdc += got_usdc;
      // Bob's two pending withdrawals are in the root but were paid by signature: not paid again.
      expect(report.already_paid).toBe(w === bob ? 2 : 0);
      // Once each: a second escape pays nothing.
      const again = JSON.parse((await cli(['escape', '--key', keyOf(w), '--url', mirror.url])).stdout) as { paid: unknown[]; already_paid: number };
      expect(again.paid).toEqual([]);
    }
    expect(paid_eth).toBeLessThanOrEqual(holdings_eth);
    expect(paid_usdc).toBeLessThanOrEqual(holdings_usdc);
    // What stays is the fee account's share (not claimable by an address): 1 USDC fee - 0.2 rebate.
    expect(await rpc.balance(c.address)).toBe(holdings_eth - paid_eth);
    expect(await tokenBalance(c.address)).toBe(800_000n);
    await expect(c.send(keyOf(alice), 'depositEth', [], ETH)).rejects.toBeInstanceOf(RevertError);
  }, 120_000);
});
